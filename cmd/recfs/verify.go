package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/cmd/internal/progress"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/index/report"
)

// errDamaged is verify's (silent) result when it found damage.
var errDamaged = errors.New("damage found")

// verifyFlags are the flags of `recfs verify`.
type verifyFlags struct {
	src    *sourceFlags
	asJSON bool
}

func newVerifyCmd() *cobra.Command {
	f := &verifyFlags{}
	cmd := &cobra.Command{
		Use:   "verify FILE|DIR...",
		Short: "Scan a record file, check every checksum, read every record back",
		Long: `verify scans the whole file afresh (never trusting a saved index), checking
every checksum, then reads every record and the trailer back through the
index as a mount would. It prints a report: record count, bytes read back,
each damaged byte range (offset, length, reason) and each record that
failed on read-back.

The bytes after the end of a recycled RocksDB/pebble log (what is left of
the file's previous life) are listed as "stale", not as damage.

Several files, or a directory (searched recursively for record files, as
grep -r does), give one report per file, then a summary line; with --json
one object per file (a file that could not be read: {"path","error"}).

Exit status: 0 when the file is clean, 1 when anything was damaged or
unreadable (also with --strict, where the first damage ends the scan); with
several files, 1 when any was.`,
		Example: `  recfs verify events.log
  recfs verify --json data.rio | jq .damage
  recfs verify /var/lib/db | tail -1        # the summary line
  recfs verify --json shards/ | jq -r 'select(.ok != true) | .path'`,
		Args: cobra.MinimumNArgs(1),
	}
	f.src = addSourceFlags(cmd)
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the report as a JSON object (one per file)")
	cmd.RunE = runE(f.validate, f.run)
	return cmd
}

// validate checks the flags and returns the options to open files with.
func (f *verifyFlags) validate(*cobra.Command, []string) (index.Options, error) {
	return f.src.options()
}

// run verifies each file args name: one file alone (exit status 1,
// silently, when it is damaged), or several (or the record files under a
// directory) one after the other, then a summary.
func (f *verifyFlags) run(cmd *cobra.Command, args []string, o index.Options) error {
	one := func(path string) (bool, error) { return f.one(cmd, path, o) }
	if !singleFile(args) {
		return eachFile(cmd, args, "damaged", true, one)
	}
	bad, err := one(args[0])
	if err == nil && bad {
		return &exitError{code: exitFailure, silent: true, err: errDamaged}
	}
	return err
}

// one scans the record file at path afresh, reads every record back and
// writes the report: bad when it found damage.
func (f *verifyFlags) one(cmd *cobra.Command, path string, o index.Options) (bad bool, err error) {
	// Always a full fresh scan; reads go through a read-ahead window.
	st, err := openSequential(cmd, path, o)
	if err != nil {
		return false, err
	}
	defer st.Close()
	var update func(int64, int64)
	bar := progress.New(cmd.ErrOrStderr(), "reading "+path)
	if bar != nil {
		update = bar.Update
	}
	v, err := report.Verify(cmd.Context(), path, st.Table, update)
	if bar != nil {
		bar.Done()
	}
	if err != nil {
		return false, err
	}
	if f.asJSON {
		err = writeJSON(cmd.OutOrStdout(), v)
	} else {
		err = v.WriteText(cmd.OutOrStdout())
	}
	return !v.OK, err
}
