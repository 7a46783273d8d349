package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/index/report"
)

// splitOperands splits ls's and cat's arguments into the operands (the first, and
// each one after it up to the first that reads as a record selection) and
// the selections. A word shaped like a selection but malformed ("5-3",
// "last:0") that names no file is a usage error.
func splitOperands(args []string) (files []string, sel []report.Range, err error) {
	i := 1
	for ; i < len(args); i++ {
		_, err := report.ParseRanges(args[i : i+1])
		if err == nil {
			break
		}
		if _, serr := os.Stat(args[i]); serr != nil && looksLikeSelection(args[i]) {
			return nil, nil, err // a selection mistyped, not a file
		}
	}
	sel, err = report.ParseRanges(args[i:])
	if err != nil {
		return nil, nil, usagef("%v (the files come first: FILE... SELECTION...)", err)
	}
	return args[:i], sel, nil
}

// looksLikeSelection reports whether a word starts as a record selection
// does (a digit, or last:), or as one counted from the end with a minus.
func looksLikeSelection(a string) bool {
	a = strings.TrimPrefix(a, "-")
	return strings.HasPrefix(a, report.LastPrefix) || a != "" && a[0] >= '0' && a[0] <= '9'
}

// isLocalDir reports whether path is a local directory.
func isLocalDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// lsMany lists several operands, or one local directory: each after a
// line "NAME:" when there are several, a blank line between them. A failed
// operand is reported on standard error and the others go on.
func lsMany(cmd *cobra.Command, files []string, sel []report.Range, offs []report.SeqRange, o index.Options, asJSON bool) error {
	out := cmd.OutOrStdout()
	fails := failures{cmd: cmd}
	for i, f := range files {
		if err := cmd.Context().Err(); err != nil {
			return err
		}
		if len(files) > 1 && !asJSON {
			if i > 0 {
				fmt.Fprintln(out)
			}
			fmt.Fprintf(out, "%s:\n", f)
		}
		var err error
		switch {
		case isLocalDir(f) && (len(sel) > 0 || len(offs) > 0):
			err = usagef("%s is a directory: it lists its files, without record selections", f)
		case isLocalDir(f):
			err = lsLocalDir(cmd, f, asJSON)
		default:
			file := ""
			if len(files) > 1 {
				file = f
			}
			err = lsOne(cmd, f, sel, offs, o, asJSON, file)
		}
		if err := fails.add(f, err); err != nil {
			return err
		}
	}
	return fails.result()
}

// lsDirJSON is one entry of `recfs ls --json DIR`.
type lsDirJSON struct {
	Name   string `json:"name"`
	Dir    bool   `json:"dir"`
	Size   int64  `json:"size"`
	Format string `json:"format"` // a record format, "other" or "dir"
}

// lsLocalDir lists the entries of a local directory with each file's
// format (read from its first bytes) and size.
func lsLocalDir(cmd *cobra.Command, dir string, asJSON bool) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(cmd.OutOrStdout())
	enc := json.NewEncoder(w)
	for _, e := range ents {
		d := lsDirJSON{Name: e.Name(), Dir: e.IsDir(), Format: "dir"}
		if !e.IsDir() {
			d.Format, d.Size = open.FileFormat(filepath.Join(dir, e.Name()))
		}
		if asJSON {
			if err := enc.Encode(d); err != nil {
				return err
			}
			continue
		}
		size, name := fmt.Sprint(d.Size), d.Name
		if d.Dir {
			size, name = "-", name+"/"
		}
		fmt.Fprintf(w, "%-15s %12s  %s\n", d.Format, size, name)
	}
	return w.Flush()
}
