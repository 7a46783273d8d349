package main

import (
	"github.com/spf13/cobra"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/index/report"
)

// infoFlags are the flags of `recfs info`.
type infoFlags struct {
	src    *sourceFlags
	dec    *decodeFlags
	asJSON bool
}

func newInfoCmd() *cobra.Command {
	f := &infoFlags{}
	cmd := &cobra.Command{
		Use:   "info FILE|DIR...",
		Short: "Describe a record file: format, records, header, trailer, damage",
		Long: `info opens a record file (building or loading its index) and prints its
format and flavor, size, record count, total payload bytes, recordio header
entries, trailer size, the byte ranges skipped as damaged, and whether the
index was built now or loaded from the cache.

For a Kafka segment it also prints the segment's facts: batches, message
formats and compression codecs seen (batches of each), first and last
offset, first, last and largest timestamp, producers and their ids,
transactional and control batches, commit and abort markers.

Several files, or a directory (searched recursively for record files, as
grep -r does; other files are counted, not opened), give one report per
file, then a summary line; a file that cannot be read is reported on
standard error and the others go on; the exit status is 1 if any failed.
With --json each file is one object (a failed one {"path","error"}).

With --json it prints one object with the fields path, format, flavor, size,
records, payload_bytes, header ([{key, type, value}]), has_trailer,
trailer_bytes, damage ([{offset, length, reason, kind}]), index_source,
index_seconds and facts (an object: first_offset, batches, ...; {} when the
format has none). Field names are stable.

With --decode (auto, or a decoder's name) it also says which decoder cat
and mount would show the records with, and why: auto's choice by the
first records, or why it leaves them raw ("decode", "decode_why").`,
		Example: `  recfs info events.log
  recfs info --json data.rio | jq .records
  recfs info shards/*.tfrecord
  recfs info --json /var/lib/db | jq -r '[.path, .records] | @tsv'
  recfs info --format leveldb --strict 000123.log`,
		Args: cobra.MinimumNArgs(1),
	}
	f.src = addSourceFlags(cmd)
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print a JSON object per file")
	f.dec = addDecodeFlags(cmd)
	cmd.RunE = runE(f.validate, f.run)
	return cmd
}

// validate checks the flags and returns the options to open files with.
func (f *infoFlags) validate(*cobra.Command, []string) (index.Options, error) {
	o, err := f.src.options()
	if err != nil {
		return o, err
	}
	return o, f.dec.check()
}

// run describes each file args name: one file alone, or several (or the
// record files under a directory) one after the other, then a summary.
func (f *infoFlags) run(cmd *cobra.Command, args []string, o index.Options) error {
	one := func(path string) (bool, error) { return false, f.one(cmd, path, o) }
	if singleFile(args) {
		_, err := one(args[0])
		return err
	}
	return eachFile(cmd, args, "", true, one)
}

// one describes the record file at path.
func (f *infoFlags) one(cmd *cobra.Command, path string, o index.Options) error {
	t, err := openTable(cmd, path, o)
	if err != nil {
		return err
	}
	defer t.Close()
	in := report.InfoOf(path, t, version())
	if f.dec.decoding() {
		s, why, err := f.dec.session(decode.Output{}, t, path)
		if err != nil {
			return err
		}
		in.Decode, in.DecodeWhy = "raw", why
		if s != nil {
			in.Decode, in.DecodeWhy = s.Name(), s.Why()
		}
	}
	if f.asJSON {
		return writeJSON(cmd.OutOrStdout(), in)
	}
	return in.WriteText(cmd.OutOrStdout())
}
