#!/usr/bin/env bash
set -euo pipefail

if [ -z "${AWS_PROFILE:-}" ]; then
  echo "AWS_PROFILE is not set; set it explicitly, e.g. export AWS_PROFILE=dev" >&2
  exit 1
fi

if ! aws configure list-profiles | grep -qx -- "$AWS_PROFILE"; then
  echo "profile '$AWS_PROFILE' is not in ~/.aws/config" >&2
  exit 1
fi

for v in AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN; do
  if [ -n "${!v:-}" ]; then
    echo "warning: $v is set in the environment and overrides the profile (value not shown)"
  fi
done

ident=$(aws sts get-caller-identity --output json)
account=$(printf '%s' "$ident" | jq -r .Account)
arn=$(printf '%s' "$ident" | jq -r .Arn)
region=$(aws configure get region --profile "$AWS_PROFILE" || echo "(none)")

printf 'profile  %s\naccount  %s\nidentity %s\nregion   %s\n' "$AWS_PROFILE" "$account" "${arn##*:}" "$region"
