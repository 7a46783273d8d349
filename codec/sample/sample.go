// Package sample holds the small record files `recfs sample` writes: fixed
// contents in each format recfs reads natively (a leveldb log, a grailbio
// recordio file with a header and a trailer, a legacy packed recordio
// file), for demos and tutorials. The same calls write the same bytes.
package sample

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/recordio"
)

// Names of the sample files.
const (
	LogName    = "events.log"
	RIOName    = "catalog.rio"
	LegacyName = "notes.grail-rpk"
)

// File is one sample file: its name and how its bytes are written.
type File struct {
	Name  string
	Write func(io.Writer) error
}

// Files are the sample files, in the order they are written.
var Files = []File{{LogName, WriteLog}, {RIOName, WriteRIO}, {LegacyName, WriteLegacy}}

// Event returns the i-th line of the sample event log: a small JSON
// object; every 97th event is an error mentioning "quota".
func Event(i int) []byte {
	users := []string{"ada", "brian", "claude", "dennis", "edsger", "grace", "ken", "linus"}
	level, msg := "info", fmt.Sprintf("user %s opened session %d", users[i%len(users)], 1000+i)
	switch {
	case i%97 == 13:
		level, msg = "error", fmt.Sprintf("disk quota exceeded for user %s", users[i%len(users)])
	case i%10 == 3:
		level, msg = "warn", fmt.Sprintf("slow request: %d ms", 200+i%800)
	}
	return fmt.Appendf(nil, `{"seq":%d,"time":"2026-01-01T%02d:%02d:%02dZ","level":%q,"msg":%q}`,
		i, i/3600%24, i/60%60, i%60, level, msg)
}

// Blob returns a record of n bytes of readable text, to show a record
// spanning several 32 KiB blocks.
func Blob(n int) []byte {
	const line = "the quick brown fox jumps over the lazy dog; "
	return []byte(strings.Repeat(line, n/len(line)+1)[:n])
}

// Books are the items of the sample recordio file.
var Books = []string{
	"Structure and Interpretation of Computer Programs|Abelson, Sussman|1985",
	"The C Programming Language|Kernighan, Ritchie|1978",
	"The Art of Computer Programming|Knuth|1968",
	"Design Patterns|Gamma, Helm, Johnson, Vlissides|1994",
	"The Mythical Man-Month|Brooks|1975",
	"Programming Pearls|Bentley|1986",
	"Compilers: Principles, Techniques, and Tools|Aho, Lam, Sethi, Ullman|1986",
	"The Go Programming Language|Donovan, Kernighan|2015",
	"A Discipline of Programming|Dijkstra|1976",
	"Unix Programming Environment|Kernighan, Pike|1984",
}

// Notes are the items of the sample legacy recordio file.
var Notes = []string{
	"legacy packed records hold several items each",
	"the length CRC covers only the eight length bytes",
	"item data is not checksummed in the legacy format",
	"", // an empty item
	"recfs numbers items across records: 000000, 000001, ...",
	"grep -r works on mounted records like on any files",
}

// WriteLog writes the leveldb sample: 1000 JSON events and one
// 100 KiB record in the middle.
func WriteLog(w io.Writer) error {
	lw := leveldb.NewWriter(w, leveldb.WriterOptions{})
	for i := 0; i < 1000; i++ {
		p := Event(i)
		if i == 500 {
			p = Blob(100 << 10)
		}
		if _, err := lw.WriteRecord(p); err != nil {
			return err
		}
	}
	return lw.Close()
}

// WriteRIO writes the recordio sample: a header with user entries,
// the books as flate-compressed items in blocks of 4, and a JSON trailer
// listing them.
func WriteRIO(w io.Writer) error {
	rw, err := recordio.NewWriter(w, recordio.WriterOptions{
		Header: []recordio.HeaderEntry{
			{Key: "app", Value: "recfs-demo"},
			{Key: "schema", Value: "title|authors|year"},
			{Key: "version", Value: int64(2)},
		},
		Transformers: []string{"flate"},
		Trailer:      true,
		MaxItems:     3, // the reference packs MaxItems+1 items a block
	})
	if err != nil {
		return err
	}
	type entry struct {
		Item  int    `json:"item"`
		Title string `json:"title"`
	}
	var toc []entry
	for i, b := range Books {
		if _, err := rw.Append([]byte(b)); err != nil {
			return err
		}
		title, _, _ := strings.Cut(b, "|")
		toc = append(toc, entry{i, title})
	}
	trailer, err := json.Marshal(map[string]any{"items": len(Books), "toc": toc})
	if err != nil {
		return err
	}
	if err := rw.SetTrailer(append(trailer, '\n')); err != nil {
		return err
	}
	return rw.Close()
}

// WriteLegacy writes the legacy packed sample: the notes in records of
// at most 4 items.
func WriteLegacy(w io.Writer) error {
	items := make([][]byte, len(Notes))
	for i, s := range Notes {
		items[i] = []byte(s)
	}
	_, err := w.Write(recordio.AppendLegacyPacked(nil, items, 4))
	return err
}
