package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/fs/open/mounting"
)

// unmountFlags are the flags of `recfs unmount`.
type unmountFlags struct {
	lazy, force, ifMounted bool
}

func newUnmountCmd() *cobra.Command {
	f := &unmountFlags{}
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
	cmd.Flags().BoolVarP(&f.lazy, "lazy", "z", false, "detach a busy mount now (umount -l)")
	cmd.Flags().BoolVar(&f.force, "force", false, "unmount even if MNT is not a recfs mount")
	cmd.Flags().BoolVarP(&f.ifMounted, "if-mounted", "q", false, "a MNT with nothing mounted on it (or missing) is no error and prints nothing: for ExecStopPost= and scripts")
	cmd.RunE = runE(f.validate, f.run)
	return cmd
}

// validate checks the flags: any mix of them is valid (--force, --lazy
// and --if-mounted each widen what run accepts), and whether each MNT
// is mounted is run's to find, one after the other.
func (f *unmountFlags) validate(*cobra.Command, []string) (struct{}, error) {
	return struct{}{}, nil
}

// run unmounts each MNT of args: one alone fails the command with its
// error; of several, each failure is reported and the others go on.
func (f *unmountFlags) run(cmd *cobra.Command, args []string, _ struct{}) error {
	if len(args) == 1 {
		return f.one(cmd, args[0])
	}
	fails := failures{cmd: cmd}
	for _, a := range args {
		if err := fails.add(a, f.one(cmd, a)); err != nil {
			return err
		}
	}
	return fails.result()
}

// one unmounts the recfs mount at arg and says so.
func (f *unmountFlags) one(cmd *cobra.Command, arg string) error {
	d, err := mounting.Detach(arg, f.lazy, f.force)
	var other *mounting.OtherMountError
	switch {
	case err != nil && d.Point == "" && f.ifMounted && errors.Is(err, os.ErrNotExist):
		return nil
	case errors.As(err, &other):
		return fmt.Errorf("%w (use --force to unmount it anyway)", err)
	case err != nil:
		return err
	case !d.Mounted:
		return notMounted(cmd, d.Point, f.ifMounted)
	case wantJSON(cmd):
		return printJSON(cmd.OutOrStdout(), map[string]any{"status": "unmounted", "mountpoint": d.Point, "stale": d.Stale})
	}
	what := "unmounted"
	if d.Stale {
		what = "cleaned up stale mount"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", what, d.Point)
	return nil
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
