package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/decoders"
	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/index/report"
)

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
	sel   []report.Range
	offs  []report.SeqRange
	o     index.Options
	m     report.Mode
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
	cmd.RunE = runE(f.validate, f.run)
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
	if r.offs, err = report.ParseOffsets(*f.offsets); err != nil {
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
	if r.files, r.sel, err = report.SplitOperands(args, os.Stat); err != nil {
		return r, err
	}
	r.m = report.Mode{JSON: asJSON, Number: f.number, Text: f.data == "text", Sep: sepText, Buf: make([]byte, report.CopyBufSize)}
	return r, f.checkSelection(cmd, r)
}

// run writes what r selects.
func (f *catFlags) run(cmd *cobra.Command, _ []string, r catRun) error {
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
func catOne(cmd *cobra.Command, path string, sel []report.Range, offs []report.SeqRange, o index.Options, m report.Mode, dec *decodeFlags, trailer bool) error {
	if trailer {
		return catTrailer(cmd, path, o)
	}
	if len(sel) > 0 || len(offs) > 0 {
		return catSelected(cmd, path, sel, offs, o, m, dec)
	}
	oo, err := openOptions(cmd, o)
	if err != nil {
		return err
	}
	e, err := open.OpenEvery(path, oo)
	if err != nil {
		return err
	}
	defer e.Close()
	if done, err := catPass(cmd, e, path, m, dec); done {
		return err
	}
	// Every record: one fresh scan of the same file, then reads in file order.
	st, err := e.Seq(cmd.Context())
	if err != nil {
		return err
	}
	defer st.Close()
	report.WarnDamaged(cmd.ErrOrStderr(), path, st.Table.Damage())
	return catRanges(cmd, st.Table, path, []report.Range{{Lo: 0, Hi: st.Table.Len()}}, true, m, dec)
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
	w := bufio.NewWriterSize(cmd.OutOrStdout(), report.CopyBufSize)
	if err := report.CopyTrailer(w, t); err != nil {
		return err
	}
	return w.Flush()
}

// catSelected writes the records of the file at path that sel or offs
// select.
func catSelected(cmd *cobra.Command, path string, sel []report.Range, offs []report.SeqRange, o index.Options, m report.Mode, dec *decodeFlags) error {
	oo, err := openOptions(cmd, o)
	if err != nil {
		return err
	}
	s, err := open.Selected(cmd.Context(), path, sel, offs, oo, func(t *index.Table) {
		report.WarnDamaged(cmd.ErrOrStderr(), path, t.Damage())
	})
	if err != nil {
		return err
	}
	defer s.Close()
	return catRanges(cmd, s.Table, path, s.Ranges, false, m, dec)
}

// catRanges writes the records rs of t (the file at path), decoded when
// dec says so (with the decoder's summary when all were asked for).
func catRanges(cmd *cobra.Command, t *index.Table, path string, rs []report.Range, all bool, m report.Mode, dec *decodeFlags) error {
	w := bufio.NewWriterSize(cmd.OutOrStdout(), report.CopyBufSize)
	if !dec.decoding() {
		return catPlain(cmd, w, t, rs, all, m)
	}
	s, err := catSession(dec, t, path, m)
	if err != nil {
		return err
	}
	return m.WriteDecoded(cmd.Context(), w, s, t, path, rs, all)
}

// catSession opens the decoding session the flags f ask for over t, the
// file at path, writing as m says; auto leaving the records raw is a usage
// error.
func catSession(f *decodeFlags, t *index.Table, path string, m report.Mode) (*decode.Session, error) {
	s, why, err := f.session(decode.Output{JSON: m.JSON, Number: m.Number, Width: len(report.RecordNumber(0, t.Len()))}, t, path)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, usagef("--decode %s: %s: %s; say which decoder with --decode NAME", f.mode, path, why)
	}
	return s, nil
}

// catPass writes every record of e, the local file at path, decoded,
// reading each once as it is found (report.WritePass), with the damage
// warning after them; done is false when that cannot be done (no --decode,
// auto, --number when the record count's width is not known before the end,
// a source or format a pass does not read, a decoder that fails to open):
// catOne's scan and table of e then do it, or say what is wrong.
func catPass(cmd *cobra.Command, e *open.Every, path string, m report.Mode, dec *decodeFlags) (done bool, err error) {
	if !dec.decoding() || dec.mode == decoders.ModeAuto {
		return false, nil
	}
	p, err := e.Pass(cmd.Context())
	if err != nil {
		return false, nil
	}
	width := len(report.RecordNumber(0, p.MaxLen()))
	if m.Number && width != len(report.RecordNumber(0, 1)) {
		return false, nil // the width depends on the count
	}
	plan, err := dec.plan(decode.Output{JSON: m.JSON, Number: m.Number, Width: width})
	if err != nil {
		return false, nil
	}
	s, _, err := plan.Open(decode.Slice(nil), open.DecodeEnv(path, p.Format()))
	if err != nil || s == nil {
		return false, nil
	}
	w := bufio.NewWriterSize(cmd.OutOrStdout(), report.CopyBufSize)
	err = m.WritePass(cmd.Context(), w, s, p, path)
	if p.Done() {
		report.WarnDamaged(cmd.ErrOrStderr(), path, p.Damage())
	}
	return true, err
}

// catMany writes the records sel of each file in turn, each record labelled
// with its file under --number and --json. A file that fails is named on
// standard error and the others go on; the exit status is then 1.
func catMany(cmd *cobra.Command, files []string, sel []report.Range, offs []report.SeqRange, o index.Options, m report.Mode, dec *decodeFlags) error {
	fails := failures{cmd: cmd}
	for _, f := range files {
		m.Label = f
		if err := fails.add(f, catOne(cmd, f, sel, offs, o, m, dec, false)); err != nil {
			return err
		}
	}
	return fails.result()
}

// catPlain writes the records rs of t as m says. A selection (not every
// record in file order, which one decoder reads through) is read ahead on
// every core: for a compressed file each record decompresses from its own
// checkpoint, so several decompress at once while earlier ones are written
// (index.Table.ReadAhead); the output is the same, in the same order.
func catPlain(cmd *cobra.Command, w *bufio.Writer, t *index.Table, rs []report.Range, all bool, m report.Mode) error {
	recs := report.Records(rs)
	if !all {
		recs = t.ReadAhead(cmd.Context(), recs, runtime.GOMAXPROCS(0))
	}
	return m.WriteSeq(cmd.Context(), w, t, recs)
}

// catFollow is cat --follow: it writes the records of the file (or remote
// object: a new version of it is written again from record 0) at path from
// the selection's start, then every record appended to it, until the
// command's context ends (SIGINT or SIGTERM), when it returns nil. It
// follows through index.Table.Follow, with the rules of a --follow mount.
func catFollow(cmd *cobra.Command, path string, o index.Options, sel []report.Range, m report.Mode,
	dec *decodeFlags, interval time.Duration) error {
	start, last, err := report.FollowStart(sel)
	if err != nil {
		return err
	}
	t, err := openTable(cmd, path, o)
	if err != nil {
		return err
	}
	defer t.Close()
	report.WarnDamaged(cmd.ErrOrStderr(), path, t.Damage())
	var s *decode.Session
	if dec.decoding() {
		if s, err = catSession(dec, t, path, m); err != nil {
			return err
		}
	}
	f := report.NewFollower(t, path, m, s, cmd.OutOrStdout(), cmd.ErrOrStderr(), start, last)
	return f.Run(cmd.Context(), interval)
}
