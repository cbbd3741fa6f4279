{{/* The release's full name: "<release>" when it already names the chart. */}}
{{- define "gitmedic.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "gitmedic.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "gitmedic.labels" -}}
{{ include "gitmedic.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "gitmedic.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "gitmedic.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "gitmedic.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The GitOps engine's custom resource: "group plural" for a Role, or "" for none. */}}
{{- define "gitmedic.engineResource" -}}
{{- if eq .Values.engine.kind "argocd-cr" -}}
argoproj.io applications
{{- else if eq .Values.engine.kind "flux" -}}
kustomize.toolkit.fluxcd.io kustomizations
{{- end -}}
{{- end -}}

{{/* One env entry read from an existing Secret: (list "NAME" .Values.secrets.x). */}}
{{- define "gitmedic.secretEnv" -}}
{{- $name := index . 0 -}}
{{- $ref := index . 1 -}}
{{- if $ref.name }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $ref.name }}
      key: {{ $ref.key }}
{{- end }}
{{- end -}}

{{/*
Egress to the Kubernetes API server: networkPolicy.egress.apiServer.to when set;
else the addresses of the `kubernetes` Endpoints in `default`, looked up at
install or upgrade; where lookup sees no cluster (helm template, a GitOps
renderer), its ports to any address, since a NetworkPolicy cannot name a Service.
*/}}
{{- define "gitmedic.apiServerEgress" -}}
{{- $api := .Values.networkPolicy.egress.apiServer }}
{{- $to := $api.to }}
{{- $ports := $api.ports }}
{{- if not $to }}
{{- $endpoints := lookup "v1" "Endpoints" "default" "kubernetes" }}
{{- range $subset := ($endpoints.subsets | default list) }}
{{- range $address := ($subset.addresses | default list) }}
{{- $to = append $to (dict "ipBlock" (dict "cidr" (printf "%s/32" $address.ip))) }}
{{- end }}
{{- range $port := ($subset.ports | default list) }}
{{- $ports = append $ports $port.port }}
{{- end }}
{{- end }}
{{- end }}
- ports:
    {{- range $port := $ports | uniq }}
    - {port: {{ $port }}, protocol: TCP}
    {{- end }}
  {{- with $to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
