#!/usr/bin/env bash
# Renders the chart's PrometheusRule (default values, the rule and the ServiceMonitor on) and checks
# it with promtool: `check rules` (syntax, templates, duplicates), then `test rules` with
# charts/ledgerops/tests/alerts.test.yaml (each alert firing and not firing at its threshold).
#
#   LEDGEROPS_HELM_BIN, LEDGEROPS_PROMTOOL_BIN   directories holding the tools (default: built and
#                                                cached by build-helm.sh and build-promtool.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."

log() { echo "[alerts] $*" >&2; }

helm_dir="${LEDGEROPS_HELM_BIN:-$(bash tests/tools/build-helm.sh | tail -1)}"
promtool_dir="${LEDGEROPS_PROMTOOL_BIN:-$(bash tests/tools/build-promtool.sh | tail -1)}"
helm="$helm_dir/helm"
promtool="$promtool_dir/promtool"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

render() {
  "$helm" template ledgerops charts/ledgerops --namespace ledgerops-system "$@"
}

# Off by default: the chart must install where the Prometheus Operator's CRDs are not.
if render | grep -q '^kind: PrometheusRule$'; then
  log "the PrometheusRule is rendered although metrics.prometheusRule.enabled is false"
  exit 1
fi

# A PrometheusRule's spec is a Prometheus rule file (`groups:`): keep what follows `spec:`, one
# indentation level less.
render --set metrics.prometheusRule.enabled=true --set metrics.serviceMonitor.enabled=true \
  --show-only templates/prometheusrule.yaml |
  awk 'inside { sub(/^  /, ""); print } /^spec:$/ { inside = 1 }' >"$work/rules.yaml"
grep -q '^groups:$' "$work/rules.yaml" || { log "no rule groups rendered"; exit 1; }
cp charts/ledgerops/tests/alerts.test.yaml "$work/"

log "$("$promtool" --version 2>&1 | head -1)"
(cd "$work" && "$promtool" check rules rules.yaml && "$promtool" test rules alerts.test.yaml)
