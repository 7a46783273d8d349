package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/index/report"
)

// lsFlags are the flags of `recfs ls`.
type lsFlags struct {
	src     *sourceFlags
	offsets *[]string
	asJSON  bool
}

// lsRun is what validate makes of ls's command line.
type lsRun struct {
	files []string
	sel   []report.Range
	offs  []report.SeqRange
	o     index.Options
}

func newLsCmd() *cobra.Command {
	f := &lsFlags{}
	cmd := &cobra.Command{
		Use:   "ls FILE|DIR... [N | A-B | A- | last:K ...]",
		Short: "List records: number, file offset, length",
		Long: `ls prints one line per record: its number, the file offset of its first
framing byte (chunk header for leveldb logs, block for recordio) and its
payload length in bytes, in aligned columns without a heading:

    N  OFFSET  LENGTH

Selections work as for cat (N, A-B, A-, last:K, or --offset). With --json each line is a
JSON object {"n":N,"offset":OFFSET,"length":LENGTH} (JSON Lines).

For a Kafka segment a fourth column holds each record's Kafka offset (and
--json a "kafka_offset" field); the length is that of the record's value.

In a damaged file the records that survive are numbered as found; ls then
prints one warning line on standard error naming the first damaged offset.

An s3://bucket/prefix/ URL (ending in "/") lists the objects and prefixes
directly under it instead, one a line: the format of each object ("other"
for one that is no record file, "?" when its first bytes could not be
read, "dir" for a prefix), its size, "published" when its index is
published beside it (NAME.recfs-idx, see recfs index --publish; such
sidecars are not listed) or "-", and its name (prefixes end in "/"); with
--json {"name","dir","size","format","published_index"}. Sizes come from
the listing; the format costs one ranged GET of each object's first
128 KiB (rarely more), 8 objects at a time.

A local directory lists its entries, one a line: the format of each file
("other" for a file that is no record file, "dir" for a directory), its
size and its name (directories end in "/"); with --json
{"name","dir","size","format"}. Several operands are listed one after the
other, each after a line "NAME:" (with --json every record line names its
"file"); the selections apply to each file. An operand that fails is
reported on standard error and the others go on; the exit status is 1 if
any failed. A file named like a selection is written ./5.`,
		Example: `  recfs ls events.log
  recfs ls events.log 100-199
  recfs ls --json data.rio | jq -s 'max_by(.length)'
  recfs ls events.log | sort -k3 -n | tail -1     # longest record
  recfs ls --offset 5000-5099 orders-0/00000000000000004000.log
  recfs ls s3://bucket/logs/                      # format, size, index of each object
  recfs ls /var/lib/db                            # which files are record files
  recfs ls shards/*.tfrecord last:1               # the last record of each shard`,
		Args: cobra.MinimumNArgs(1),
	}
	f.src = addSourceFlags(cmd)
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print JSON Lines")
	f.offsets = addOffsetFlag(cmd)
	cmd.RunE = runE(f.validate, f.run)
	return cmd
}

// validate checks the command line and turns it into what run does.
func (f *lsFlags) validate(_ *cobra.Command, args []string) (lsRun, error) {
	var r lsRun
	var err error
	if r.o, err = f.src.options(); err != nil {
		return r, err
	}
	if r.offs, err = report.ParseOffsets(*f.offsets); err != nil {
		return r, err
	}
	r.files, r.sel, err = report.SplitOperands(args, os.Stat)
	return r, err
}

// run lists what r names: one file's records, or several operands (local
// directories among them) one after the other.
func (f *lsFlags) run(cmd *cobra.Command, _ []string, r lsRun) error {
	if len(r.files) == 1 && !open.LocalDir(r.files[0]) {
		return f.one(cmd, r, r.files[0], "")
	}
	return f.many(cmd, r)
}

// one lists one operand of ls: the records of a file selected by r (file,
// when not empty, goes in every JSON line), or the entries of an S3
// prefix.
func (f *lsFlags) one(cmd *cobra.Command, r lsRun, path, file string) error {
	if open.KindOf(path) == open.S3Prefix {
		if len(r.sel) > 0 || len(r.offs) > 0 {
			return usagef("%s is a prefix: it lists its objects, without record selections", path)
		}
		return lsS3Prefix(cmd, path, f.asJSON)
	}
	t, err := openTable(cmd, path, r.o)
	if err != nil {
		return err
	}
	defer t.Close()
	report.WarnDamaged(cmd.ErrOrStderr(), path, t.Damage())
	if len(r.offs) > 0 && len(r.sel) > 0 {
		return usagef("select records by number or by --offset, not both")
	}
	rs, err := report.Select(t, path, r.sel, r.offs)
	if err != nil {
		return err
	}
	return report.List(cmd.Context(), cmd.OutOrStdout(), t, rs, f.asJSON, file)
}

// many lists several operands, or one local directory: each after a line
// "NAME:" when there are several, a blank line between them. A failed
// operand is reported on standard error and the others go on.
func (f *lsFlags) many(cmd *cobra.Command, r lsRun) error {
	out := cmd.OutOrStdout()
	fails := failures{cmd: cmd}
	for i, name := range r.files {
		if err := cmd.Context().Err(); err != nil {
			return err
		}
		if len(r.files) > 1 && !f.asJSON {
			if i > 0 {
				fmt.Fprintln(out)
			}
			fmt.Fprintf(out, "%s:\n", name)
		}
		var err error
		switch {
		case open.LocalDir(name) && (len(r.sel) > 0 || len(r.offs) > 0):
			err = usagef("%s is a directory: it lists its files, without record selections", name)
		case open.LocalDir(name):
			var ents []report.Entry
			if ents, err = open.DirEntries(name); err == nil {
				err = report.WriteEntries(out, ents, f.asJSON)
			}
		default:
			file := ""
			if len(r.files) > 1 {
				file = name
			}
			err = f.one(cmd, r, name, file)
		}
		if err := fails.add(name, err); err != nil {
			return err
		}
	}
	return fails.result()
}
