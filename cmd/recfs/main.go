// Command recfs mounts record files (leveldb logs, grailbio recordio) as
// directories with one file per record, and inspects them without FUSE:
// info, ls, cat, verify and index work on a file directly.
//
// Exit status: 0 on success, 1 on a runtime failure (including damage found
// by verify), 2 on a usage error. See README.md for the user's manual.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
