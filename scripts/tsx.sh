#!/usr/bin/env bash
# Run a TypeScript entry of the repository with tsx. Inside the repository the library ('remit',
# 'remit/core', ...) resolves to its TypeScript sources through the `remit-source` export condition
# of ts-shell/package.json; NODE_OPTIONS passes the condition on to every child process.
case " ${NODE_OPTIONS:-} " in *" --conditions=remit-source "*) ;; *) export NODE_OPTIONS="${NODE_OPTIONS:-} --conditions=remit-source" ;; esac
# tsx is the repository's: resolved from its root, so that this runs from any directory.
root="$(cd "$(dirname "$0")/.." && pwd)"
exec node --import "file://$root/node_modules/tsx/dist/loader.mjs" "$@"
