package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/index"
)

// verifyJSON is the object `recfs verify --json` prints.
type verifyJSON struct {
	Path         string          `json:"path"`
	Format       string          `json:"format"`
	Flavor       string          `json:"flavor"`
	Size         int64           `json:"size"`
	Records      int64           `json:"records"`       // records found by the scan
	PayloadBytes int64           `json:"payload_bytes"` // bytes read back through the index
	TrailerBytes int64           `json:"trailer_bytes"` // trailer bytes read back; 0 if none
	Damage       []damageJSON    `json:"damage"`        // ranges the scan skipped (kind "stale": a recycled log's end, not damage)
	ReadErrors   []readErrorJSON `json:"read_errors"`   // records that failed on read-back
	OK           bool            `json:"ok"`            // no damage (a stale tail is none) and no read errors
}

// readErrorJSON is a record (N >= 0) or the trailer (N = -1) whose bytes
// could not be read back.
type readErrorJSON struct {
	N      int64  `json:"n"`
	Offset int64  `json:"offset"` // file offset of the record's framing
	Error  string `json:"error"`
}

// countingDiscard counts the bytes written to it.
type countingDiscard struct{ n int64 }

func (c *countingDiscard) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// verifyTable reads every record and the trailer of t back through the
// index and reports what failed. progress, if not nil, gets payload bytes
// read so far out of the total.
func verifyTable(cmd *cobra.Command, path string, t *index.Table, progress func(done, total int64)) (verifyJSON, error) {
	inf := t.Info()
	v := verifyJSON{
		Path: path, Format: inf.Format.String(), Flavor: inf.Flavor, Size: inf.FileSize,
		Records: t.Len(), Damage: damageList(t.Damage()), ReadErrors: []readErrorJSON{},
	}
	buf := make([]byte, copyBufSize)
	var sink countingDiscard
	ctx := cmd.Context()
	for n := int64(0); n < t.Len(); n++ {
		if err := ctx.Err(); err != nil {
			return v, err
		}
		before := sink.n
		if err := copyRecord(ctx, &sink, t, n, buf); err != nil {
			v.ReadErrors = append(v.ReadErrors, readErrorJSON{N: n, Offset: t.Offset(n), Error: err.Error()})
		} else if got := sink.n - before; got != t.Size(n) {
			v.ReadErrors = append(v.ReadErrors, readErrorJSON{N: n, Offset: t.Offset(n),
				Error: fmt.Sprintf("read %d bytes of a %d-byte record", got, t.Size(n))})
		}
		if progress != nil {
			progress(sink.n, inf.Bytes)
		}
	}
	v.PayloadBytes = sink.n
	if t.HasTrailer() {
		var tr countingDiscard
		if err := copyTrailer(&tr, t); err != nil {
			v.ReadErrors = append(v.ReadErrors, readErrorJSON{N: -1, Offset: -1, Error: err.Error()})
		}
		v.TrailerBytes = tr.n
	}
	damage, _ := splitStale(v.Damage)
	v.OK = len(damage) == 0 && len(v.ReadErrors) == 0
	return v, nil
}

// writeVerifyText writes verify's human-readable report.
func writeVerifyText(w io.Writer, v verifyJSON) error {
	var b strings.Builder
	fmt.Fprintf(&b, "file:     %s\n", v.Path)
	fmt.Fprintf(&b, "format:   %s\n", v.Format)
	if v.Flavor != "" && v.Flavor != v.Format {
		fmt.Fprintf(&b, "flavor:   %s\n", v.Flavor)
	}
	fmt.Fprintf(&b, "records:  %d, %d payload bytes read back\n", v.Records, v.PayloadBytes)
	if v.TrailerBytes > 0 {
		fmt.Fprintf(&b, "trailer:  %d bytes read back\n", v.TrailerBytes)
	}
	writeDamageText(&b, "damage", v.Damage)
	for _, e := range v.ReadErrors {
		if e.N < 0 {
			fmt.Fprintf(&b, "unreadable trailer: %s\n", e.Error)
		} else {
			fmt.Fprintf(&b, "unreadable record %d (file offset %d): %s\n", e.N, e.Offset, e.Error)
		}
	}
	if v.OK {
		b.WriteString("OK\n")
	} else {
		fmt.Fprintf(&b, "DAMAGED\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// errDamaged is verify's (silent) result when it found damage.
var errDamaged = errors.New("damage found")

func newVerifyCmd() *cobra.Command {
	var asJSON bool
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
	src := addSourceFlags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as a JSON object (one per file)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o, err := src.options()
		if err != nil {
			return err
		}
		one := func(path string) (fileStatus, error) {
			// Always a full fresh scan; reads go through a read-ahead window.
			st, err := openSequential(cmd, path, o)
			if err != nil {
				return fileFailed, err
			}
			defer st.Close()
			var progress func(int64, int64)
			bar := newProgressBar(cmd.ErrOrStderr(), "reading "+path)
			if bar != nil {
				progress = bar.Update
			}
			v, err := verifyTable(cmd, path, st.Table, progress)
			if bar != nil {
				bar.Done()
			}
			if err != nil {
				return fileFailed, err
			}
			if asJSON {
				err = writeJSON(cmd.OutOrStdout(), v)
			} else {
				err = writeVerifyText(cmd.OutOrStdout(), v)
			}
			if err != nil || v.OK {
				return fileOK, err
			}
			return fileBad, nil
		}
		if !singleFile(args) {
			return eachFile(cmd, args, "damaged", true, one)
		}
		st, err := one(args[0])
		if err == nil && st == fileBad {
			return &exitError{code: exitFailure, silent: true, err: errDamaged}
		}
		return err
	}
	return cmd
}
