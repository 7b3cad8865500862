#!/bin/sh
# Runs the model's test programs (make test), each with a bound of 60 s, and says which failed. A program
# runs once per line "/* env: VAR=value ... */" near the top of its source, with that environment (the
# model reads its knobs once per process), or once with none.
failed=0
for t in "$@"; do
  name=$(basename "$t")
  envs=$(sed -n 's|^/\* env: \(.*\) \*/$|\1|p' "test/$name.c")
  [ -n "$envs" ] || envs=" "
  echo "$envs" | while IFS= read -r env; do
    start=$(date +%s)
    if env $env timeout 60 "$t" > "$t.log" 2>&1; then
      echo "ok   $name ($(grep -c '^ok ' "$t.log") tests, $(( $(date +%s) - start )) s)${env:+ with $env}"
    else
      echo "FAIL $name${env:+ with $env}"; cat "$t.log"; echo x >> "$t.failed"
    fi
  done
  if [ -f "$t.failed" ]; then failed=$((failed + 1)); rm -f "$t.failed"; fi
done
[ "$failed" = 0 ] && echo "all model tests passed" || { echo "$failed program(s) failed"; exit 1; }
