// Command gitserver serves the git repositories under a directory over HTTP on
// 127.0.0.1 (a random free port) so Flux's source-controller can clone them.
// It prints the server's base URL on its first stdout line and runs until it
// receives SIGTERM or SIGINT.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/fluxcd/pkg/gittestserver"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gitserver DOCROOT")
		os.Exit(2)
	}
	server := gittestserver.NewGitServer(os.Args[1])
	if err := server.StartHTTP(); err != nil {
		fmt.Fprintln(os.Stderr, "gitserver:", err)
		os.Exit(1)
	}
	defer server.StopHTTP()
	fmt.Println(server.HTTPAddress())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
