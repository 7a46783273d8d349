package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/index"
)

// recordRange is a half-open range [lo, hi) of record numbers; hi < 0 means
// "to the last record". last > 0 selects the last records instead: as many
// as it says (all of them in a shorter file).
type recordRange struct{ lo, hi, last int64 }

// String formats r for messages and tests: "{lo hi}" or "last:K".
func (r recordRange) String() string {
	if r.last > 0 {
		return lastPrefix + strconv.FormatInt(r.last, 10)
	}
	return fmt.Sprintf("{%d %d}", r.lo, r.hi)
}

// lastPrefix starts a selection counted from the end ("last:10"); a
// leading minus would read as a flag.
const lastPrefix = "last:"

// parseRanges parses record selections: "N", "A-B" (inclusive), "A-"
// (from A to the last record) and "last:K" (the last K records). A
// malformed selection is a usage error.
func parseRanges(args []string) ([]recordRange, error) {
	out := make([]recordRange, 0, len(args))
	for _, a := range args {
		if k, ok := strings.CutPrefix(a, lastPrefix); ok {
			v, err := strconv.ParseInt(k, 10, 64)
			if err != nil || v < 1 || k != strconv.FormatInt(v, 10) {
				return nil, usagef("bad record selection %q (want last:K with K >= 1)", a)
			}
			out = append(out, recordRange{lo: 0, hi: -1, last: v})
			continue
		}
		lo, hi, isRange := strings.Cut(a, "-")
		l, err := strconv.ParseInt(lo, 10, 64)
		if err != nil || l < 0 {
			return nil, usagef("bad record selection %q (want N, A-B, A- or last:K)", a)
		}
		switch {
		case !isRange:
			out = append(out, recordRange{lo: l, hi: l + 1})
		case hi == "":
			out = append(out, recordRange{lo: l, hi: -1})
		default:
			h, err := strconv.ParseInt(hi, 10, 64)
			if err != nil || h < l || h == 1<<63-1 {
				return nil, usagef("bad record selection %q (want N, A-B with A <= B, or A-)", a)
			}
			out = append(out, recordRange{lo: l, hi: h + 1})
		}
	}
	return out, nil
}

// resolveRanges fixes open ends against n records and checks every range
// lies inside [0, n). No ranges selects every record.
func resolveRanges(rs []recordRange, n int64) ([]recordRange, error) {
	if len(rs) == 0 {
		return []recordRange{{lo: 0, hi: n}}, nil
	}
	out := make([]recordRange, len(rs))
	for i, r := range rs {
		if r.last > 0 {
			out[i] = recordRange{lo: max(0, n-r.last), hi: n}
			continue
		}
		if r.hi < 0 {
			r.hi = max(n, r.lo+1)
		}
		if r.hi > n {
			bad := max(r.lo, n)
			if n == 0 {
				return nil, fmt.Errorf("record %d is out of range: the file has no records", bad)
			}
			return nil, fmt.Errorf("record %d is out of range: the file has %d records (0-%d)", bad, n, n-1)
		}
		out[i] = r
	}
	return out, nil
}

// unescape interprets the backslash escapes of a --sep value (\n, \t, \0,
// \\, \xHH, ...), so shells need no $'...' quoting.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for s != "" {
		switch {
		case s[0] != '\\':
			b.WriteByte(s[0]) // bytes pass through, valid UTF-8 or not
			s = s[1:]
			continue
		case len(s) >= 2 && (s[1] == '"' || s[1] == '\''):
			b.WriteByte(s[1])
			s = s[2:]
			continue
		case len(s) >= 2 && s[1] == '0' && (len(s) == 2 || s[2] < '0' || s[2] > '7'):
			b.WriteByte(0) // \0 alone, as printf and the help say (\000 is octal)
			s = s[2:]
			continue
		}
		r, multibyte, tail, err := strconv.UnquoteChar(s, 0)
		if err != nil {
			return "", usagef("bad escape in separator %q", s)
		}
		if multibyte {
			b.WriteRune(r)
		} else {
			b.WriteByte(byte(r)) // \xHH and octal escapes are single bytes
		}
		s = tail
	}
	return b.String(), nil
}

// seqMinRecords is the selection size from which cat rescans the file for
// reading in file order (openSequential) rather than a read per record.
const seqMinRecords = 4096

// countRecords returns how many records the resolved ranges select.
func countRecords(rs []recordRange) int64 {
	var n int64
	for _, r := range rs {
		n += r.hi - r.lo
	}
	return n
}

// copyBufSize is the read size used to stream payloads.
const copyBufSize = 256 << 10

// recordSize returns the size of record n of t, proven first: a table
// loaded from a saved one that lies about it is replaced by a scan (see
// index.Table.ReadAt), and the size given is the source's.
func recordSize(t *index.Table, n int64) (int64, error) {
	if _, err := t.ReadAt(n, nil, 0); err != nil {
		return 0, fmt.Errorf("record %d (file offset %d): %w", n, t.Offset(n), err)
	}
	return t.Size(n), nil
}

// copyRecord writes record n of t to w, a buffer at a time until ctx
// ends.
func copyRecord(ctx context.Context, w io.Writer, t *index.Table, n int64, buf []byte) error {
	size, err := recordSize(t, n)
	if err != nil {
		return err
	}
	for off := int64(0); off < size; {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, err := t.ReadAt(n, buf[:min(int64(len(buf)), size-off)], off)
		if m > 0 {
			if _, werr := w.Write(buf[:m]); werr != nil {
				return werr
			}
			off += int64(m)
		}
		if err != nil && (err != io.EOF || off < size) {
			return fmt.Errorf("record %d at byte %d (file offset of record %d): %w", n, off, t.Offset(n), err)
		}
		if m == 0 && err == nil {
			return fmt.Errorf("record %d: read returned no data at byte %d", n, off)
		}
	}
	return nil
}

// copyTrailer writes the trailer of t to w.
func copyTrailer(w io.Writer, t *index.Table) error {
	_, err := io.Copy(w, io.NewSectionReader(readerAtFunc(t.ReadTrailerAt), 0, t.TrailerSize()))
	if err != nil {
		return fmt.Errorf("trailer: %w", err)
	}
	return nil
}

// catJSON is one line of cat --json.
type catJSON struct {
	File     string `json:"file,omitempty"` // when cat writes several files
	N        int64  `json:"n"`
	Offset   int64  `json:"offset"`
	Length   int64  `json:"length"`
	Data     string `json:"data"`
	Encoding string `json:"encoding"`
}

// appendSeqField appends `,"kafka_offset":N` (or "seq") for a record of
// a table whose format numbers its records, nothing otherwise.
func appendSeqField(b []byte, t *index.Table, n int64) []byte {
	seq, ok := t.Seq(n)
	if !ok {
		return b
	}
	b = append(b, `,"`+seqField(t)+`":`...)
	return strconv.AppendInt(b, seq, 10)
}

// maxTextRecord is the largest record cat --json --data text reads into
// memory to check it is UTF-8; larger ones are streamed as base64.
const maxTextRecord = 64 << 20

// writeRecordJSON writes record n of t as one JSON line: the payload as
// text when asked and valid UTF-8, else base64 (streamed, so a record of
// any size costs one buffer).
func writeRecordJSON(ctx context.Context, w *bufio.Writer, t *index.Table, n int64, buf []byte, text bool, file string) error {
	size, err := recordSize(t, n)
	if err != nil {
		return err
	}
	if text && size <= maxTextRecord {
		var b bytes.Buffer
		b.Grow(int(size))
		if err := copyRecord(ctx, &b, t, n, buf); err != nil {
			return err
		}
		if utf8.Valid(b.Bytes()) {
			line, err := json.Marshal(catJSON{File: file, N: n, Offset: t.Offset(n), Length: size, Data: b.String(), Encoding: "text"})
			if err != nil {
				return err
			}
			line = append(appendSeqField(line[:len(line)-1], t, n), "}\n"...)
			_, err = w.Write(line)
			return err
		}
	}
	head := []byte{'{'}
	if file != "" {
		f, _ := json.Marshal(file)
		head = append(append(append(head, `"file":`...), f...), ',')
	}
	w.Write(appendSeqField(fmt.Appendf(head, `"n":%d,"offset":%d,"length":%d`, n, t.Offset(n), size), t, n))
	w.WriteString(`,"data":"`)
	enc := base64.NewEncoder(base64.StdEncoding, w)
	if err := copyRecord(ctx, enc, t, n, buf); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err = w.WriteString(`","encoding":"base64"}` + "\n")
	return err
}

// readerAtFunc adapts a function to io.ReaderAt.
type readerAtFunc func(p []byte, off int64) (int, error)

func (f readerAtFunc) ReadAt(p []byte, off int64) (int, error) { return f(p, off) }

// catFlags are the flags of `recfs cat`.
type catFlags struct {
	src                     *sourceFlags
	dec                     *decodeFlags
	offsets                 *[]string
	sep, data               string
	trailer, number, follow bool
	followInterval          time.Duration
}

// catRun is what validate makes of cat's command line.
type catRun struct {
	files []string
	sel   []recordRange
	offs  []seqRange
	o     index.Options
	m     catMode
}

func newCatCmd() *cobra.Command {
	f := &catFlags{}
	cmd := &cobra.Command{
		Use:   "cat FILE... [N | A-B | A- | last:K ...]",
		Short: "Write records' payloads to standard output",
		Long: `cat writes the payloads of the selected records to standard output, in the
order given (all records in file order when no selection is given). A
selection is a record number N, an inclusive range A-B, A- for A to the
last record, or last:K for the last K records (all of them in a shorter
file). Record numbers start at 0, as the names in a mount.

--number writes each record's number (zero-padded, as its name in a mount)
and a tab before its payload, one record per line unless --sep says
otherwise: "recfs cat --number f.log | grep needle" tells which records
match. --json writes JSON Lines {"n","offset","length","data","encoding"}
instead: data is base64, or with --data text the payload as a string when
it is valid UTF-8 (encoding says which).

--sep writes a separator after each record; backslash escapes such as \n,
\t, \0 and \x1e are interpreted. --trailer writes the grailbio trailer
instead of records.

Checksums are verified as the bytes are read; a record that fails its
checksum stops cat with exit status 1 after the bytes before it.

--decode NAME writes each record decoded as text by the decoder NAME (the
list is below; the README shows each one's output): --number then labels
every line with its record number and, where the format has one, its
sequence number; --json writes JSON Lines instead. A record the decoder
does not fit stops cat with exit status 1 after what came before it.
--decode auto picks the decoder by the records' content.

Several files are written one after the other (the selections apply to
each); --number then writes FILE:NUMBER before each record (or each
decoded line) and --json adds a "file" field. A file that fails is named on
standard error and the others go on (exit status 1). A file named like a
selection is written ./5.

--follow (-f) goes on after the selected records, as tail -f does: it writes
every record appended to the file (by a database, by recfs append) until
interrupted (Ctrl-C ends it with status 0). The selection is then none
(from record 0), A- or last:K. It follows the rules of a --follow mount: a
record still being written appears once complete, and a file rewritten,
truncated or replaced is written again from its record 0 once it has
settled (a line on standard error says so). --number, --json and --decode
work as without it.

In a damaged file the records that survive are numbered as found, so record
N after the first damaged range is not the writer's N-th: cat then prints
one warning line on standard error naming the first damaged offset.`,
		Example: `  recfs cat events.log                 # every record, back to back
  recfs cat events.log 0 7 10-19 --sep '\n'
  recfs cat events.log 100- | wc -c
  recfs cat --number shards/*.tfrecord last:1   # the last record of each shard
  recfs cat --trailer data.rio | jq .
  recfs cat events.log last:10 --sep '\n'   # the last ten records
  recfs cat --number events.log | grep -F 'user=42'
  recfs cat --decode batch --number db/000042.log | grep 'hello world'
  recfs cat --decode example --json train.tfrecord | jq '.features.label'
  recfs cat --follow --decode batch db/000042.log last:5   # tail -f of a live WAL
  recfs cat --json --data text events.log | jq -r 'select(.data | test("error")) | .n'`,
		Args: cobra.MinimumNArgs(1),
	}
	cmd.Long += "\n\n" + decodersHelp()
	f.register(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		r, err := f.validate(cmd, args)
		if err != nil {
			return err
		}
		return f.run(cmd, r)
	}
	return cmd
}

// register adds cat's flags to cmd, bound to f.
func (f *catFlags) register(cmd *cobra.Command) {
	f.src = addSourceFlags(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.sep, "sep", "", `separator written after each record (escapes like \n are interpreted)`)
	fl.BoolVar(&f.trailer, "trailer", false, "write the grailbio trailer instead of records")
	fl.BoolVar(&f.number, "number", false, "write each record's number (its name in a mount) and a tab before it; --sep defaults to \\n")
	fl.StringVar(&f.data, "data", "base64", `with --json: "base64", or "text" for UTF-8 payloads (a record that is not valid UTF-8 stays base64 and says so)`)
	_ = cmd.RegisterFlagCompletionFunc("data", fixedCompletion("base64", "text"))
	f.dec = addDecodeFlags(cmd)
	f.offsets = addOffsetFlag(cmd)
	fl.BoolVarP(&f.follow, "follow", "f", false, "after the records, write every record appended to the file until interrupted (as tail -f)")
	fl.DurationVar(&f.followInterval, "follow-interval", 0, "with --follow: how often the file is checked (default 500ms)")
}

// checkModes refuses output flags that contradict each other.
func (f *catFlags) checkModes(cmd *cobra.Command, asJSON bool) error {
	sepSet := cmd.Flags().Changed("sep")
	switch {
	case f.data != "base64" && f.data != "text":
		return usagef("--data %q: want base64 or text", f.data)
	case asJSON && (f.number || sepSet):
		return usagef("--json lines carry the record number; --number and --sep do not apply")
	case (asJSON || f.number) && f.trailer:
		return usagef("--trailer writes the trailer alone; --json and --number are for records")
	case f.dec.decoding() && f.trailer:
		return usagef("--decode is for records; --trailer writes the trailer as it is")
	}
	return f.dec.check()
}

// checkSelection refuses selections the other flags do not take.
func (f *catFlags) checkSelection(cmd *cobra.Command, r catRun) error {
	switch {
	case f.trailer && (len(r.sel) > 0 || len(r.offs) > 0):
		return usagef("--trailer takes no record selection")
	case len(r.sel) > 0 && len(r.offs) > 0:
		return usagef("select records by number or by --offset, not both")
	case f.follow:
		return f.checkFollow(r)
	case cmd.Flags().Changed("follow-interval"):
		return usagef("--follow-interval is for --follow")
	case f.trailer && len(r.files) > 1:
		return usagef("--trailer writes one file's trailer (got %d files)", len(r.files))
	}
	return nil
}

// checkFollow refuses what --follow does not take.
func (f *catFlags) checkFollow(r catRun) error {
	switch {
	case f.trailer:
		return usagef("--follow is for records; --trailer writes the trailer once")
	case len(r.offs) > 0:
		return usagef("--follow starts at a record number (A- or last:K), not at --offset")
	case len(r.files) > 1:
		return usagef("--follow follows one file (got %d)", len(r.files))
	}
	return nil
}

// validate checks the command line and turns it into what run does.
func (f *catFlags) validate(cmd *cobra.Command, args []string) (catRun, error) {
	var r catRun
	var err error
	if r.o, err = f.src.options(); err != nil {
		return r, err
	}
	asJSON := wantJSON(cmd)
	if r.offs, err = parseOffsets(*f.offsets); err != nil {
		return r, err
	}
	if err := f.checkModes(cmd, asJSON); err != nil {
		return r, err
	}
	sep := f.sep
	if f.number && !cmd.Flags().Changed("sep") && !f.dec.decoding() {
		sep = `\n` // decoded text ends its own lines
	}
	sepText, err := unescape(sep)
	if err != nil {
		return r, err
	}
	if r.files, r.sel, err = splitOperands(args); err != nil {
		return r, err
	}
	r.m = catMode{asJSON: asJSON, number: f.number, text: f.data == "text", sep: sepText, buf: make([]byte, copyBufSize)}
	return r, f.checkSelection(cmd, r)
}

// run writes what r selects.
func (f *catFlags) run(cmd *cobra.Command, r catRun) error {
	switch {
	case f.follow:
		return catFollow(cmd, r.files[0], r.o, r.sel, r.m, f.dec, f.followInterval)
	case len(r.files) > 1:
		return catMany(cmd, r.files, r.sel, r.offs, r.o, r.m, f.dec)
	}
	return catOne(cmd, r.files[0], r.sel, r.offs, r.o, r.m, f.dec, f.trailer)
}

// catOne writes the records of the file at path that sel or offs select
// (every record when both are empty), or its trailer, as m and dec say.
func catOne(cmd *cobra.Command, path string, sel []recordRange, offs []seqRange, o index.Options, m catMode, dec *decodeFlags, trailer bool) error {
	if trailer {
		return catTrailer(cmd, path, o)
	}
	if len(sel) > 0 || len(offs) > 0 {
		return catSelected(cmd, path, sel, offs, o, m, dec)
	}
	// Every record: one fresh scan, then reads in file order.
	st, err := openSequential(cmd, path, o)
	if err != nil {
		return err
	}
	defer st.Close()
	warnDamaged(cmd.ErrOrStderr(), path, st.Table.Damage())
	return catRanges(cmd, st.Table, path, []recordRange{{lo: 0, hi: st.Table.Len()}}, true, m, dec)
}

// catTrailer writes the trailer of the file at path.
func catTrailer(cmd *cobra.Command, path string, o index.Options) error {
	t, err := openTable(cmd, path, o)
	if err != nil {
		return err
	}
	defer t.Close()
	if !t.HasTrailer() {
		return fmt.Errorf("%s has no trailer", path)
	}
	w := bufio.NewWriterSize(cmd.OutOrStdout(), copyBufSize)
	if err := copyTrailer(w, t); err != nil {
		return err
	}
	return w.Flush()
}

// catSelected writes the records of the file at path that sel or offs
// select.
func catSelected(cmd *cobra.Command, path string, sel []recordRange, offs []seqRange, o index.Options, m catMode, dec *decodeFlags) error {
	t, err := openTable(cmd, path, o)
	if err != nil {
		return err
	}
	defer t.Close()
	warnDamaged(cmd.ErrOrStderr(), path, t.Damage())
	rs, err := selectRanges(t, path, sel, offs)
	if err != nil {
		return err
	}
	if countRecords(rs) >= seqMinRecords {
		// Many records: rescan once and read through a window.
		st, err := openSequential(cmd, path, o)
		if err != nil {
			return err
		}
		defer st.Close()
		t = st.Table
	}
	return catRanges(cmd, t, path, rs, false, m, dec)
}

// catRanges writes the records rs of t (the file at path), decoded when
// dec says so (with the decoder's summary when all were asked for).
func catRanges(cmd *cobra.Command, t *index.Table, path string, rs []recordRange, all bool, m catMode, dec *decodeFlags) error {
	w := bufio.NewWriterSize(cmd.OutOrStdout(), copyBufSize)
	if dec.decoding() {
		return catDecoded(cmd, w, t, path, rs, all, dec, m.asJSON, m.number, m.sep, m.label)
	}
	ctx := cmd.Context()
	for _, r := range rs {
		for n := r.lo; n < r.hi; n++ {
			if err := ctx.Err(); err != nil {
				w.Flush()
				return err
			}
			if err := m.write(ctx, w, t, n); err != nil {
				w.Flush()
				return err
			}
		}
	}
	return w.Flush()
}

// catDecoded writes the records rs of t (the file at path) decoded as the
// flags say, then, when all were asked for, the decoder's summary.
func catDecoded(cmd *cobra.Command, w *bufio.Writer, t *index.Table, path string, rs []recordRange, all bool,
	f *decodeFlags, asJSON, number bool, sep, label string) error {
	s, err := catSession(f, t, path, asJSON, number)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	var out, lab []byte
	for _, r := range rs {
		for n := r.lo; n < r.hi; n++ {
			if err := ctx.Err(); err != nil {
				w.Flush()
				return err
			}
			var err error
			out, err = s.Render(out[:0], t, 0, n)
			if label != "" && (number || asJSON) {
				lab = labelLines(lab[:0], out, label, asJSON)
				out, lab = lab, out
			}
			if _, werr := w.Write(out); werr != nil {
				return werr
			}
			if err != nil {
				w.Flush()
				return fmt.Errorf("%s: %w", path, err)
			}
			if _, err := w.WriteString(sep); err != nil {
				return err
			}
		}
	}
	if all {
		var err error
		out, _, err = s.Summary(out[:0], t, 0)
		if _, werr := w.Write(out); werr != nil {
			return werr
		}
		if err != nil {
			w.Flush()
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return w.Flush()
}

// catSession opens the decoding session the flags f ask for over t, the
// file at path.
func catSession(f *decodeFlags, t *index.Table, path string, asJSON, number bool) (*decode.Session, error) {
	plan, err := f.plan(decode.Output{JSON: asJSON, Number: number, Width: len(recordNumber(0, t.Len()))})
	if err != nil {
		return nil, err
	}
	s, why, err := plan.Open(t, open.DecodeEnv(path, t.Info().Format))
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, usagef("--decode %s: %s: %s; say which decoder with --decode NAME", f.mode, path, why)
	}
	return s, nil
}
