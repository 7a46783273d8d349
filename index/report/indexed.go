package report

import (
	"fmt"
	"io"
	"time"

	"github.com/recfs/recfs/index"
)

// Indexed is what `recfs index` prints about one file: what was done to
// its saved index and what the index holds. It is also the one-line
// object of `recfs index --json`, whose fields are in name order.
type Indexed struct {
	CacheFile     string  `json:"cache_file"`     // the saved index written or loaded; "" if none
	DamagedRanges int     `json:"damaged_ranges"` // byte ranges skipped as damaged
	File          string  `json:"file"`           // the FILE argument
	Format        string  `json:"format"`         // the record format
	Index         string  `json:"index"`          // built, refreshed or up_to_date
	PayloadBytes  int64   `json:"payload_bytes"`  // sum of the record lengths
	Records       int64   `json:"records"`        // number of records (items)
	Seconds       float64 `json:"seconds"`        // time spent building or loading the index

	took time.Duration // Seconds, for the text line
}

// IndexedOf says what index did to t, the file at path: built it, loaded
// it from the cache (up_to_date), or loaded and refreshed it (changed).
func IndexedOf(path string, t *index.Table, changed bool) Indexed {
	inf := t.Info()
	state := "built"
	switch {
	case inf.Loaded == "cached" && changed:
		state = "refreshed"
	case inf.Loaded == "cached":
		state = "up_to_date"
	}
	return Indexed{
		CacheFile: inf.CacheFile, DamagedRanges: len(t.Damage()), File: path, Format: inf.Format.String(),
		Index: state, PayloadBytes: inf.Bytes, Records: inf.Records, Seconds: inf.BuildTime.Seconds(),
		took: inf.BuildTime,
	}
}

// WriteText writes in as one line: "PATH: index built: leveldb, 10
// records, 494 payload bytes, 0 damaged ranges, 1.2ms".
func (in Indexed) WriteText(w io.Writer) error {
	what := in.Index // built
	switch in.Index {
	case "refreshed":
		what = "refreshed (the file grew or changed)"
	case "up_to_date":
		what = "up to date (loaded from the cache)"
	}
	_, err := fmt.Fprintf(w, "%s: index %s: %s, %d records, %d payload bytes, %d damaged ranges, %s\n",
		in.File, what, in.Format, in.Records, in.PayloadBytes, in.DamagedRanges, index.FormatDuration(in.took))
	return err
}
