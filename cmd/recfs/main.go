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
	// The lean link hands what it leaves out to recfs-full before anything
	// else happens (see handoff.go).
	if leanLink {
		if why := needsFull(os.Args[1:]); why != "" {
			os.Exit(handOff(why, os.Args, os.Stderr))
		}
	} else if err := checkHandedOff(); err != nil {
		os.Exit(printError(os.Args[1:], os.Stderr, err, exitFailure))
	}
	// The first SIGINT or SIGTERM cancels the context, so commands stop
	// cleanly (a foreground mount unmounts); once it has, the default
	// action is restored, so a second signal kills a stuck process.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// A daemon child whose parent dies before its verdict stops as if
	// signalled (see parentGone); it takes its pipes now, before any
	// work.
	ctx, stopDaemonChild = context.WithCancel(ctx)
	daemonStatus()
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
