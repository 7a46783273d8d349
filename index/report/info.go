package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/index"
)

// Info is what `recfs info` prints about a table, and the object of
// `recfs info --json`. Its field names are a stable interface: fields may
// be added, never renamed or removed.
type Info struct {
	Path         string   `json:"path"`                 // the FILE argument
	Format       string   `json:"format"`               // leveldb, recordio, recordio-legacy or tfrecord
	Flavor       string   `json:"flavor"`               // finer description, e.g. "pebble WAL (recyclable)"
	Size         int64    `json:"size"`                 // bytes of the file covered by the index
	Records      int64    `json:"records"`              // number of records (items)
	PayloadBytes int64    `json:"payload_bytes"`        // sum of the record lengths
	Header       []Header `json:"header"`               // recordio header entries in file order; [] if none
	HasTrailer   bool     `json:"has_trailer"`          // a grailbio trailer is present
	TrailerBytes int64    `json:"trailer_bytes"`        // its length; 0 when there is none
	Damage       []Damage `json:"damage"`               // skipped byte ranges in offset order; [] if none
	IndexSource  string   `json:"index_source"`         // "built" (scanned now) or "cached" (loaded)
	IndexSeconds float64  `json:"index_seconds"`        // time spent building or loading the index
	CacheFile    string   `json:"cache_file"`           // the saved index used or written; "" if none
	Facts        Facts    `json:"facts"`                // what the format says beyond records (Kafka: batches, offsets, ...); {} if nothing
	Version      string   `json:"version"`              // the recfs build that answered (recfs --version)
	Decode       string   `json:"decode,omitempty"`     // with --decode: the decoder chosen, or "raw"
	DecodeWhy    string   `json:"decode_why,omitempty"` // with --decode: how it was chosen (auto's reason)
}

// Facts is the format's facts: an object of name (spaces as
// underscores: "first_offset") to value, written in the format's order.
type Facts []index.Fact

// MarshalJSON writes the facts as one object, in order.
func (fs Facts) MarshalJSON() ([]byte, error) {
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
func (fs *Facts) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("facts: want an object")
	}
	*fs = Facts{}
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

// Header is one recordio header entry. Type is bool, int, uint or
// string; Value is the JSON boolean, number or string.
type Header struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Damage is one skipped byte range. Kind is corrupt, truncated,
// unsupported, limit or stale; stale is not damage but the end of a
// recycled log (RocksDB, pebble): the bytes of the file's previous life.
type Damage struct {
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
func splitStale(ds []Damage) (damage, stale []Damage) {
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
func writeDamageText(b *strings.Builder, key string, ds []Damage) {
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

// InfoOf gathers what info prints about t, the file at path, as the recfs
// build version describes itself.
func InfoOf(path string, t *index.Table, version string) Info {
	inf := t.Info()
	out := Info{
		Path:         path,
		Format:       inf.Format.String(),
		Flavor:       inf.Flavor,
		Size:         inf.FileSize,
		Records:      t.Len(),
		PayloadBytes: inf.Bytes,
		Header:       []Header{},
		HasTrailer:   t.HasTrailer(),
		Damage:       damageList(t.Damage()),
		IndexSource:  inf.Loaded,
		IndexSeconds: inf.BuildTime.Seconds(),
		CacheFile:    inf.CacheFile,
		Facts:        Facts(inf.Facts),
		Version:      version,
	}
	if out.HasTrailer {
		out.TrailerBytes = t.TrailerSize()
	}
	for _, h := range t.Header() {
		out.Header = append(out.Header, Header{Key: h.Key, Type: headerType(h.Value), Value: h.Value})
	}
	return out
}

// damageList converts damage ranges for printing.
func damageList(ds []codec.Damage) []Damage {
	out := make([]Damage, 0, len(ds))
	for _, d := range ds {
		out = append(out, Damage{Offset: d.Off, Length: d.Len, Reason: d.Reason, Kind: damageKind(d.Err)})
	}
	return out
}

// WriteText writes the human-readable form of in.
func (in Info) WriteText(w io.Writer) error {
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
