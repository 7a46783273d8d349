package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/fs/open/mounting"
)

func init() { registerCommand(newUnmountCmd) }

func newUnmountCmd() *cobra.Command {
	var lazy, force, ifMounted bool
	cmd := &cobra.Command{
		Use:     "unmount MNT...",
		Aliases: []string{"umount"},
		Short:   "Unmount a recfs mount, including a stale one left by a killed process",
		Long: `unmount ends the recfs mount at MNT. The process serving it (foreground or
--daemon) then exits. A stale mount whose server was killed ("Transport
endpoint is not connected") is cleaned up the same way.

A mount that is in use (an open file, a shell inside it) cannot be unmounted;
--lazy detaches it now and lets the kernel finish when the last user leaves.
MNT must be a recfs mount unless --force is given. --if-mounted (-q) makes
a MNT that nothing is mounted on (or that does not exist) no error, so a
service's ExecStopPost= or a script's cleanup can always run it.

Several MNTs are unmounted one after the other, as umount(8) does; one
that fails is named on standard error (with --json as {"path","error"})
and the others go on (exit status 1 if any failed).`,
		Example: `  recfs unmount /mnt/ev
  recfs unmount --lazy /mnt/ev
  recfs unmount /mnt/a /mnt/b
  recfs unmount --if-mounted /mnt/ev      # no error when already unmounted`,
		Args: cobra.MinimumNArgs(1),
	}
	cmd.Flags().BoolVarP(&lazy, "lazy", "z", false, "detach a busy mount now (umount -l)")
	cmd.Flags().BoolVar(&force, "force", false, "unmount even if MNT is not a recfs mount")
	cmd.Flags().BoolVarP(&ifMounted, "if-mounted", "q", false, "a MNT with nothing mounted on it (or missing) is no error and prints nothing: for ExecStopPost= and scripts")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		one := func(arg string) error { return unmountOne(cmd, arg, lazy, force, ifMounted) }
		if len(args) == 1 {
			return one(args[0])
		}
		fails := failures{cmd: cmd}
		for _, a := range args {
			if err := fails.add(a, one(a)); err != nil {
				return err
			}
		}
		return fails.result()
	}
	return cmd
}

// unmountOne unmounts the recfs mount at arg as recfs unmount does.
func unmountOne(cmd *cobra.Command, arg string, lazy, force, ifMounted bool) error {
	mnt, err := mounting.CleanPoint(arg)
	if err != nil && ifMounted && errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	m, ok, err := mounting.At(mnt)
	if err != nil {
		return err
	}
	if !ok {
		return notMounted(cmd, mnt, ifMounted)
	}
	if m.FSType != mounting.FSType && !force {
		return fmt.Errorf("%s is a %s mount, not recfs (use --force to unmount it anyway)", mnt, m)
	}
	return detach(cmd, mnt, lazy)
}

// notMounted answers for a mountpoint with nothing mounted on it: an
// error, unless --if-mounted.
func notMounted(cmd *cobra.Command, mnt string, ifMounted bool) error {
	if !ifMounted {
		return fmt.Errorf("%s: %w (--if-mounted makes that no error)", mnt, mounting.ErrNotMounted)
	}
	if wantJSON(cmd) {
		return printJSON(cmd.OutOrStdout(), map[string]any{"status": "not_mounted", "mountpoint": mnt, "stale": false})
	}
	return nil
}

// detach unmounts the mount at mnt, waits until it is gone and says so.
func detach(cmd *cobra.Command, mnt string, lazy bool) error {
	stale := mounting.IsStale(mnt)
	if err := mounting.UnmountSoon(mnt, lazy); err != nil {
		return err
	}
	if err := mounting.WaitGone(mnt, mounting.DefaultUnmountTimeout); err != nil {
		return err
	}
	if wantJSON(cmd) {
		return printJSON(cmd.OutOrStdout(), map[string]any{"status": "unmounted", "mountpoint": mnt, "stale": stale})
	}
	what := "unmounted"
	if stale {
		what = "cleaned up stale mount"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", what, mnt)
	return nil
}
