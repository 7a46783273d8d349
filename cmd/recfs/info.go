package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/index"
)

// infoJSON is the object `recfs info --json` prints. Its field names are a
// stable interface: fields may be added, never renamed or removed.
type infoJSON struct {
	Path         string       `json:"path"`                 // the FILE argument
	Format       string       `json:"format"`               // leveldb, recordio, recordio-legacy or tfrecord
	Flavor       string       `json:"flavor"`               // finer description, e.g. "pebble WAL (recyclable)"
	Size         int64        `json:"size"`                 // bytes of the file covered by the index
	Records      int64        `json:"records"`              // number of records (items)
	PayloadBytes int64        `json:"payload_bytes"`        // sum of the record lengths
	Header       []headerJSON `json:"header"`               // recordio header entries in file order; [] if none
	HasTrailer   bool         `json:"has_trailer"`          // a grailbio trailer is present
	TrailerBytes int64        `json:"trailer_bytes"`        // its length; 0 when there is none
	Damage       []damageJSON `json:"damage"`               // skipped byte ranges in offset order; [] if none
	IndexSource  string       `json:"index_source"`         // "built" (scanned now) or "cached" (loaded)
	IndexSeconds float64      `json:"index_seconds"`        // time spent building or loading the index
	CacheFile    string       `json:"cache_file"`           // the saved index used or written; "" if none
	Facts        factsJSON    `json:"facts"`                // what the format says beyond records (Kafka: batches, offsets, ...); {} if nothing
	Version      string       `json:"version"`              // the recfs build that answered (recfs --version)
	Decode       string       `json:"decode,omitempty"`     // with --decode: the decoder chosen, or "raw"
	DecodeWhy    string       `json:"decode_why,omitempty"` // with --decode: how it was chosen (auto's reason)
}

// factsJSON is the format's facts: an object of name (spaces as
// underscores: "first_offset") to value, written in the format's order.
type factsJSON []index.Fact

// MarshalJSON writes the facts as one object, in order.
func (fs factsJSON) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(strings.ReplaceAll(f.Name, " ", "_"))
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads what MarshalJSON wrote, in order; numbers come back
// as float64.
func (fs *factsJSON) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("facts: want an object")
	}
	*fs = factsJSON{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return err
		}
		*fs = append(*fs, index.Fact{Name: strings.ReplaceAll(tok.(string), "_", " "), Value: v})
	}
	return nil
}

// headerJSON is one recordio header entry. Type is bool, int, uint or
// string; Value is the JSON boolean, number or string.
type headerJSON struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// damageJSON is one skipped byte range. Kind is corrupt, truncated,
// unsupported, limit or stale; stale is not damage but the end of a
// recycled log (RocksDB, pebble): the bytes of the file's previous life.
type damageJSON struct {
	Offset int64  `json:"offset"`
	Length int64  `json:"length"`
	Reason string `json:"reason"`
	Kind   string `json:"kind"`
}

// damageKind names the sentinel error a damage matches.
func damageKind(err error) string {
	switch {
	case errors.Is(err, codec.ErrTruncated):
		return "truncated"
	case errors.Is(err, codec.ErrUnsupported):
		return "unsupported"
	case errors.Is(err, codec.ErrLimit):
		return "limit"
	case errors.Is(err, codec.ErrStale):
		return "stale"
	}
	return "corrupt"
}

// splitStale separates the stale tail of a recycled log (kind "stale") from
// real damage.
func splitStale(ds []damageJSON) (damage, stale []damageJSON) {
	for _, d := range ds {
		if d.Kind == "stale" {
			stale = append(stale, d)
		} else {
			damage = append(damage, d)
		}
	}
	return damage, stale
}

// writeDamageText writes the damage rows of info and verify: real damage
// (or "none"), then the stale tail of a recycled log, which is the end of
// the log and not damage.
func writeDamageText(b *strings.Builder, key string, ds []damageJSON) {
	damage, stale := splitStale(ds)
	if len(damage) == 0 {
		fmt.Fprintf(b, "%-9s none\n", key+":")
	} else {
		var total int64
		for _, d := range damage {
			total += d.Length
		}
		fmt.Fprintf(b, "%-9s %d ranges, %d bytes skipped\n", key+":", len(damage), total)
		for _, d := range damage {
			fmt.Fprintf(b, "  offset %d, %d bytes: %s (%s)\n", d.Offset, d.Length, d.Reason, d.Kind)
		}
	}
	for _, d := range stale {
		fmt.Fprintf(b, "%-9s offset %d, %d bytes: %s (the end of the log, not damage)\n", "stale:", d.Offset, d.Length, d.Reason)
	}
}

// headerType names the type of a header value.
func headerType(v any) string {
	switch v.(type) {
	case bool:
		return "bool"
	case int64, int:
		return "int"
	case uint64:
		return "uint"
	case string:
		return "string"
	}
	return fmt.Sprintf("%T", v)
}

// tableInfo gathers what info prints about t.
func tableInfo(path string, t *index.Table) infoJSON {
	inf := t.Info()
	out := infoJSON{
		Path:         path,
		Format:       inf.Format.String(),
		Flavor:       inf.Flavor,
		Size:         inf.FileSize,
		Records:      t.Len(),
		PayloadBytes: inf.Bytes,
		Header:       []headerJSON{},
		HasTrailer:   t.HasTrailer(),
		Damage:       damageList(t.Damage()),
		IndexSource:  inf.Source,
		IndexSeconds: inf.BuildTime.Seconds(),
		CacheFile:    inf.CacheFile,
		Facts:        factsJSON(inf.Facts),
		Version:      version(),
	}
	if out.HasTrailer {
		out.TrailerBytes = t.TrailerSize()
	}
	for _, h := range t.Header() {
		out.Header = append(out.Header, headerJSON{Key: h.Key, Type: headerType(h.Value), Value: h.Value})
	}
	return out
}

// damageList converts damage ranges for printing.
func damageList(ds []codec.Damage) []damageJSON {
	out := make([]damageJSON, 0, len(ds))
	for _, d := range ds {
		out = append(out, damageJSON{Offset: d.Off, Length: d.Len, Reason: d.Reason, Kind: damageKind(d.Err)})
	}
	return out
}

// writeJSON writes v indented, with a final newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeInfoText writes the human-readable form of info.
func writeInfoText(w io.Writer, in infoJSON) error {
	var b strings.Builder
	row := func(k, format string, a ...any) { fmt.Fprintf(&b, "%-9s %s\n", k+":", fmt.Sprintf(format, a...)) }
	row("file", "%s", in.Path)
	row("format", "%s", in.Format)
	if in.Flavor != "" && in.Flavor != in.Format {
		row("flavor", "%s", in.Flavor)
	}
	for _, f := range in.Facts {
		row(f.Name, "%v", f.Value)
	}
	row("size", "%d bytes", in.Size)
	row("records", "%d", in.Records)
	row("payload", "%d bytes", in.PayloadBytes)
	if len(in.Header) == 0 {
		row("header", "none")
	} else {
		row("header", "%d entries", len(in.Header))
		for _, h := range in.Header {
			fmt.Fprintf(&b, "  %s = %s (%s)\n", h.Key, headerValueText(h.Value), h.Type)
		}
	}
	if in.HasTrailer {
		row("trailer", "%d bytes", in.TrailerBytes)
	} else {
		row("trailer", "none")
	}
	writeDamageText(&b, "damage", in.Damage)
	row("index", "%s in %s", in.IndexSource, index.FormatDuration(time.Duration(in.IndexSeconds*float64(time.Second))))
	if in.CacheFile != "" {
		row("cache", "%s", strconv.Quote(in.CacheFile))
	}
	if in.Decode != "" {
		row("decode", "%s (%s)", in.Decode, in.DecodeWhy)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// headerValueText prints a header value; strings are quoted so that empty
// values and spaces are visible.
func headerValueText(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

func newInfoCmd() *cobra.Command {
	var asJSON bool
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
	src := addSourceFlags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON object per file")
	dec := addDecodeFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o, err := src.options()
		if err != nil {
			return err
		}
		if err := dec.check(); err != nil {
			return err
		}
		one := func(path string) (fileStatus, error) {
			t, err := openTable(cmd, path, o)
			if err != nil {
				return fileFailed, err
			}
			defer t.Close()
			in := tableInfo(path, t)
			if dec.decoding() {
				if in.Decode, in.DecodeWhy, err = dec.choice(t, path); err != nil {
					return fileFailed, err
				}
			}
			if asJSON {
				return fileOK, writeJSON(cmd.OutOrStdout(), in)
			}
			return fileOK, writeInfoText(cmd.OutOrStdout(), in)
		}
		if singleFile(args) {
			_, err := one(args[0])
			return err
		}
		return eachFile(cmd, args, "", true, one)
	}
	return cmd
}
