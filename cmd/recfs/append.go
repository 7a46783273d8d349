package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/index/report"
	"github.com/recfs/recfs/source/local"
)

// appendFlags are the flags of recfs append.
type appendFlags struct {
	lines   bool
	sync    bool
	create  string
	trailer bool
	force   bool
}

// appendRun is what validate makes of append's command line.
type appendRun struct {
	path   string   // FILE
	inputs []string // its INPUTs ("-" or none: standard input)
}

func newAppendCmd() *cobra.Command {
	f := &appendFlags{}
	cmd := &cobra.Command{
		Use:   "append FILE [INPUT...]",
		Short: "Append records to a record file through its format's writer",
		Long: `append adds records to the end of a leveldb log, grailbio recordio file or
TFRecord file, framed by the format's own writer (the same bytes goleveldb,
pebble, grailbio's or TensorFlow's writer would produce). Each INPUT file becomes one record; "-" or
no INPUT reads standard input. With --lines every line (without its newline)
becomes one record.

A torn tail left by a crashed writer (a record, or recordio block, cut
short at the end of the file) is moved aside first: its bytes are saved
under <user cache dir>/recfs/torn, which must be private (with no $HOME or
$XDG_CACHE_HOME the append is refused), and a line on standard error (and
"moved" in --json) says where they went. Any other bytes after the last
record are not cut: the append is refused, naming their offset, and FILE is
left as it was; "recfs verify FILE" shows them, and --force moves them aside
the same way. App Engine padding is kept, and a recordio trailer is
rewritten after the new blocks, crash-safely. Legacy recordio files and
compressed TFRecord files are read-only.

Concurrent appends (other recfs append processes, --rw mounts) take turns
by an exclusive flock of FILE; each lands after the others. The exit status
is the truth: 0 if and only if the records are in FILE; on failure FILE is
left as it was.

A log its writer closed (pebble's end-of-log marker) is refused: no reader
would see records after it. Logs of RocksDB and pebble get chunks of their own
recyclable or WAL-sync flavor and log number. A file whose directory holds a
database LOCK file that a running database has locked (leveldb, goleveldb,
RocksDB, pebble) is refused too, since the database owns its log; --force
appends anyway.`,
		Example: `  recfs append events.log payload.json other.json
  printf 'a\nb\nc\n' | recfs append --lines events.log
  recfs append --create recordio --sync new.rio - < blob.bin`,
		Args: cobra.MinimumNArgs(1),
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.lines, "lines", false, "one record per input line instead of one per input")
	fl.BoolVar(&f.sync, "sync", false, "fsync before returning (recordio appends always sync)")
	fl.StringVar(&f.create, "create", "", "create FILE first if it does not exist, in this format (leveldb, recordio or tfrecord); refuse a FILE of another format")
	fl.BoolVar(&f.trailer, "trailer", false, "with --create recordio: the new file has a (empty) trailer")
	fl.BoolVar(&f.force, "force", false, "append even though a running database holds the LOCK file of FILE's directory, or FILE ends in bytes that are not a torn record (they are saved aside)")
	_ = cmd.RegisterFlagCompletionFunc("create", fixedCompletion("leveldb", "recordio", "tfrecord"))
	cmd.RunE = runE(f.validate, f.run)
	return cmd
}

// validate splits the command line into FILE and its INPUTs. The flags
// are checked later, by run: --trailer without --create is refused only
// once the inputs opened, so that an input that does not open stays the
// error a user sees first.
func (f *appendFlags) validate(_ *cobra.Command, args []string) (appendRun, error) {
	return appendRun{path: args[0], inputs: args[1:]}, nil
}

// run opens the inputs (index.OpenInputs: all of them before anything is
// written, so a failure reading any leaves the file untouched), then
// appends all their records in one batch.
func (f *appendFlags) run(cmd *cobra.Command, _ []string, r appendRun) error {
	in, err := index.OpenInputs(cmd.InOrStdin(), r.inputs, f.lines)
	if err != nil {
		return err
	}
	defer in.Close()
	moved := []report.Moved{}
	// With --sync the append's fsync also makes a file --create made durable.
	o := index.Options{CacheDir: "-", Writable: true, IgnoreDBLock: f.force, MoveDamagedTail: f.force, DeferCreateSync: f.sync, KeepCreateLock: f.create != "",
		TailMoved: func(m index.MovedTail) {
			moved = append(moved, report.MovedOf(m))
			fmt.Fprintf(cmd.ErrOrStderr(), "recfs: %s\n", moved[len(moved)-1])
		}}
	t, err := f.openTarget(cmd, r.path, o)
	if err != nil {
		return forceHint(err)
	}
	defer t.Close()
	// The table is closed next: it need not take the new records in.
	first, count, err := in.AppendTo(cmd.Context(), t, index.AppendOptions{Sync: f.sync, CountOnly: true})
	if err != nil {
		return forceHint(err)
	}
	a := report.AppendedOf(r.path, first, count, moved)
	if wantJSON(cmd) {
		return printJSON(cmd.OutOrStdout(), a)
	}
	_ = a.WriteText(cmd.OutOrStdout()) // the records are in FILE: the status says so
	return nil
}

// openTarget opens the file at path for appending, creating it first
// when it is missing and --create names its format.
func (f *appendFlags) openTarget(cmd *cobra.Command, path string, o index.Options) (*index.Table, error) {
	if f.create == "" && f.trailer {
		return nil, usagef("--trailer goes with --create")
	}
	oo, err := openOptions(cmd, o)
	if err != nil {
		return nil, err
	}
	return open.CreateOrOpen(cmd.Context(), path, f.create, f.trailer, oo)
}

// forceHint adds the way out to a refusal because of a running database.
func forceHint(err error) error {
	if errors.Is(err, local.ErrDBLocked) {
		return fmt.Errorf("%w (--force appends anyway)", err)
	}
	return err
}
