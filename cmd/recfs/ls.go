package main

import (
	"github.com/spf13/cobra"

	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/index/report"
)

func newLsCmd() *cobra.Command {
	var asJSON bool
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
	src := addSourceFlags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON Lines")
	offsets := addOffsetFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o, err := src.options()
		if err != nil {
			return err
		}
		offs, err := report.ParseOffsets(*offsets)
		if err != nil {
			return err
		}
		files, sel, err := splitOperands(args)
		if err != nil {
			return err
		}
		if len(files) == 1 && !isLocalDir(files[0]) {
			return lsOne(cmd, files[0], sel, offs, o, asJSON, "")
		}
		return lsMany(cmd, files, sel, offs, o, asJSON)
	}
	return cmd
}

// lsOne lists one operand of ls: the records of a file selected by sel or
// offs (file, when not empty, goes in every JSON line), or the entries of
// an S3 prefix.
func lsOne(cmd *cobra.Command, path string, sel []report.Range, offs []report.SeqRange, o index.Options, asJSON bool, file string) error {
	if open.KindOf(path) == open.S3Prefix {
		if len(sel) > 0 || len(offs) > 0 {
			return usagef("%s is a prefix: it lists its objects, without record selections", path)
		}
		return lsS3Prefix(cmd, path, asJSON)
	}
	t, err := openTable(cmd, path, o)
	if err != nil {
		return err
	}
	defer t.Close()
	warnDamaged(cmd.ErrOrStderr(), path, t.Damage())
	if len(offs) > 0 && len(sel) > 0 {
		return usagef("select records by number or by --offset, not both")
	}
	rs, err := report.Select(t, path, sel, offs)
	if err != nil {
		return err
	}
	return report.List(cmd.Context(), cmd.OutOrStdout(), t, rs, asJSON, file)
}
