package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/recordio"

	"github.com/spf13/cobra"
)

// Names of the files `recfs sample` writes.
const (
	sampleLog    = "events.log"
	sampleRIO    = "catalog.rio"
	sampleLegacy = "notes.grail-rpk"
)

// sampleEvent returns the i-th line of the sample event log: a small JSON
// object; every 97th event is an error mentioning "quota".
func sampleEvent(i int) []byte {
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

// sampleBlob returns a record of n bytes of readable text, to show a record
// spanning several 32 KiB blocks.
func sampleBlob(n int) []byte {
	const line = "the quick brown fox jumps over the lazy dog; "
	return []byte(strings.Repeat(line, n/len(line)+1)[:n])
}

// sampleBooks are the items of the sample recordio file.
var sampleBooks = []string{
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

// sampleNotes are the items of the sample legacy recordio file.
var sampleNotes = []string{
	"legacy packed records hold several items each",
	"the length CRC covers only the eight length bytes",
	"item data is not checksummed in the legacy format",
	"", // an empty item
	"recfs numbers items across records: 000000, 000001, ...",
	"grep -r works on mounted records like on any files",
}

// writeSampleLog writes the leveldb sample: 1000 JSON events and one
// 100 KiB record in the middle.
func writeSampleLog(w io.Writer) error {
	lw := leveldb.NewWriter(w, leveldb.WriterOptions{})
	for i := 0; i < 1000; i++ {
		p := sampleEvent(i)
		if i == 500 {
			p = sampleBlob(100 << 10)
		}
		if _, err := lw.WriteRecord(p); err != nil {
			return err
		}
	}
	return lw.Close()
}

// writeSampleRIO writes the recordio sample: a header with user entries,
// the books as flate-compressed items in blocks of 4, and a JSON trailer
// listing them.
func writeSampleRIO(w io.Writer) error {
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
	for i, b := range sampleBooks {
		if _, err := rw.Append([]byte(b)); err != nil {
			return err
		}
		title, _, _ := strings.Cut(b, "|")
		toc = append(toc, entry{i, title})
	}
	trailer, err := json.Marshal(map[string]any{"items": len(sampleBooks), "toc": toc})
	if err != nil {
		return err
	}
	if err := rw.SetTrailer(append(trailer, '\n')); err != nil {
		return err
	}
	return rw.Close()
}

// writeSampleLegacy writes the legacy packed sample: the notes in records of
// at most 4 items.
func writeSampleLegacy(w io.Writer) error {
	items := make([][]byte, len(sampleNotes))
	for i, s := range sampleNotes {
		items[i] = []byte(s)
	}
	_, err := w.Write(recordio.AppendLegacyPacked(nil, items, 4))
	return err
}

// writeSampleFile creates dir/name with write and prints its path.
func writeSampleFile(out io.Writer, dir, name string, write func(io.Writer) error) error {
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, path)
	return err
}

func newSampleCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "sample DIR",
		Short: "Write small sample record files in every format (for the demo)",
		Long: `sample writes three small record files into DIR (created if missing):
` + sampleLog + ` (leveldb log of JSON events), ` + sampleRIO + ` (grailbio recordio with a
header and a trailer) and ` + sampleLegacy + ` (legacy packed recordio), and
prints their paths. The contents are fixed, so runs are reproducible.`,
		Example: `  recfs sample /tmp/recfs-demo`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, s := range []struct {
				name  string
				write func(io.Writer) error
			}{
				{sampleLog, writeSampleLog},
				{sampleRIO, writeSampleRIO},
				{sampleLegacy, writeSampleLegacy},
			} {
				if err := writeSampleFile(out, dir, s.name, s.write); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
