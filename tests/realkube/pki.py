"""The control plane's own PKI: one CA, the API server's serving certificate,
the front proxy's client certificate, the service-account key pair, and static
bearer tokens for every identity that talks to the API server.

ECDSA P-256 keys: generated in milliseconds, accepted everywhere here. Static
tokens (``--token-auth-file``) instead of client certificates keep each
identity one line: the controllers get the users RBAC's bootstrap policy binds
(``system:kube-controller-manager``, ``system:kube-scheduler``), the harness and
the GitOps engine an admin in ``system:masters``.
"""

from __future__ import annotations

import datetime
import ipaddress
import secrets
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

# identity -> (user, groups)
IDENTITIES = {
    "admin": ("kube-admin", "system:masters"),
    "controller-manager": ("system:kube-controller-manager", ""),
    "scheduler": ("system:kube-scheduler", ""),
}
SERVER_NAMES = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc")


@dataclass(frozen=True)
class Pki:
    folder: Path
    tokens: dict[str, str]  # identity -> bearer token

    @property
    def ca(self) -> Path:
        return self.folder / "ca.crt"

    def file(self, name: str) -> str:
        return str(self.folder / name)


def make_pki(folder: Path) -> Pki:
    folder.mkdir(parents=True, exist_ok=True)
    ca_key = _key(folder / "ca.key")
    ca = _certificate("gitmedic-realkube-ca", ca_key, ca_key, None, ca=True)
    _write_cert(folder / "ca.crt", ca)
    serving = x509.SubjectAlternativeName(
        [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), *map(x509.DNSName, SERVER_NAMES)]
    )
    for name, common_name, san in (
        ("apiserver", "kube-apiserver", serving),
        ("front-proxy-client", "front-proxy-client", None),
    ):
        key = _key(folder / f"{name}.key")
        _write_cert(folder / f"{name}.crt", _certificate(common_name, key, ca_key, ca, san=san))
    _key(folder / "sa.key")
    sa_public = serialization.load_pem_private_key((folder / "sa.key").read_bytes(), None)
    (folder / "sa.pub").write_bytes(
        sa_public.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    tokens = {identity: secrets.token_hex(16) for identity in IDENTITIES}
    lines = [f'{tokens[i]},{user},{user},"{groups}"' for i, (user, groups) in IDENTITIES.items()]
    (folder / "tokens.csv").write_text("\n".join(lines) + "\n")
    return Pki(folder, tokens)


def _key(path: Path) -> ec.EllipticCurvePrivateKey:
    key = ec.generate_private_key(ec.SECP256R1())
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)
    return key


def _certificate(
    common_name: str,
    key: ec.EllipticCurvePrivateKey,
    signer: ec.EllipticCurvePrivateKey,
    issuer: x509.Certificate | None,
    *,
    ca: bool = False,
    san: x509.SubjectAlternativeName | None = None,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer.subject if issuer else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if san is not None:
        builder = builder.add_extension(san, critical=False)
    return builder.sign(signer, hashes.SHA256())


def _write_cert(path: Path, cert: x509.Certificate) -> None:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
