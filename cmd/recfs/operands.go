package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/index/report"
)

// A command that takes many FILE operands (info, verify) runs on each file
// named and on each record file under a directory named, like grep -r:
// one file's failure is reported and the others go on, a summary line
// ends the output, and the exit status is 1 when any file failed.
// A single file operand gets the single-file output, without a summary.

// runE is the RunE of a command made of a validate, which turns the
// command line into what the command does, and a run, which does it.
func runE[T any](validate func(*cobra.Command, []string) (T, error), run func(*cobra.Command, []string, T) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		v, err := validate(cmd, args)
		if err != nil {
			return err
		}
		return run(cmd, args, v)
	}
}

// singleFile reports whether args name one file (not a directory): the
// command then runs as a single-file command.
func singleFile(args []string) bool { return len(args) == 1 && !open.LocalDir(args[0]) }

// errSomeFailed is the (silent) result of a multi-file command when a file
// failed.
var errSomeFailed = errors.New("some files failed")

// eachFile runs do on every file args name (see open.Expand); do reports
// bad when the command ran and found something wrong (verify: damage).
// With --json, each file's result is do's output and a file whose do
// failed is the object {"path","error"} on standard output; as text, a
// failed file is a line "recfs: PATH: ERROR" on standard error, results
// are separated by a blank line, and a summary line follows them. It
// returns an exitError (status 1, nothing more to print) when any file
// failed or was bad.
func eachFile(cmd *cobra.Command, args []string, what string, blocks bool, do func(path string) (bad bool, err error)) error {
	files, other, err := open.Expand(args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no record files in %s (%d other %s)", strings.Join(args, ", "), other, report.Plural(other, "file", "files"))
	}
	out, asJSON := cmd.OutOrStdout(), wantJSON(cmd)
	sep := &report.BlockWriter{W: out, Lines: !blocks}
	if !asJSON {
		cmd.SetOut(sep)
		defer cmd.SetOut(out)
	}
	fails := failures{cmd: cmd, out: out, blocks: blocks}
	var bad int
	for _, f := range files {
		if err := cmd.Context().Err(); err != nil {
			return err
		}
		sep.Next()
		isBad, err := do(f)
		if err := fails.add(f, err); err != nil {
			return err
		}
		if isBad && err == nil {
			bad++
		}
	}
	if !asJSON {
		sep.Lines = false // a blank line before the summary
		sep.Next()
		fmt.Fprintln(sep, report.Summary{Files: len(files), Bad: bad, Failed: fails.n, Other: other, BadWord: what})
	}
	fails.n += bad
	return fails.result()
}

// withPath returns err's text, starting with path unless it names it.
func withPath(path string, err error) string {
	msg := err.Error()
	if !strings.Contains(msg, path) {
		msg = path + ": " + msg
	}
	return msg
}

// mustStop reports whether an operand's error ends a multi-file command
// instead of being reported while the others go on: the command was
// interrupted, or its command line is wrong.
func mustStop(cmd *cobra.Command, err error) bool {
	return err != nil && (cmd.Context().Err() != nil || exitCode(err) == exitUsage)
}

// failures counts the operands of a command that failed, reporting each.
type failures struct {
	cmd    *cobra.Command
	out    io.Writer // where a failure goes with --json (nil: standard error)
	blocks bool      // with --json: indented objects
	n      int
}

// add reports operand path's error, if any, and lets the command go on:
// a line "recfs: PATH: ERROR" on standard error, or with --json the
// object {"path","error"} on f.out. It returns the error back when the
// command must stop instead (it was interrupted, or the command line is
// wrong).
func (f *failures) add(path string, err error) error {
	if err == nil {
		return nil
	}
	if mustStop(f.cmd, err) {
		return err
	}
	f.n++
	msg, out := withPath(path, err), f.out
	if out == nil {
		out = f.cmd.ErrOrStderr()
	}
	switch {
	case wantJSON(f.cmd) && f.blocks:
		_ = writeJSON(out, map[string]string{"path": path, "error": msg})
	case wantJSON(f.cmd):
		_ = printJSON(out, map[string]string{"path": path, "error": msg})
	default:
		fmt.Fprintf(f.cmd.ErrOrStderr(), "recfs: %s\n", msg)
	}
	return nil
}

// result is the command's result: an exitError (status 1, already
// reported) when an operand failed.
func (f *failures) result() error {
	if f.n > 0 {
		return &exitError{code: exitFailure, silent: true, err: errSomeFailed}
	}
	return nil
}

// addOffsetFlag registers --offset: records selected by the number their
// format gives them (Kafka offsets) instead of by record number.
func addOffsetFlag(cmd *cobra.Command) *[]string {
	offs := new([]string)
	cmd.Flags().StringSliceVar(offs, "offset", nil, "select records by Kafka offset: N, A-B (inclusive) or A-; repeat or separate with commas")
	return offs
}
