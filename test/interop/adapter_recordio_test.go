package interop

// The one place that calls recfs's recordio codec API (writer, scanner,
// reader), so a rename costs one edit. The appender is in
// adapter_append_test.go.

import (
	"bytes"
	"fmt"
	"io"

	recfsrio "github.com/recfs/recfs/codec/recordio"
	"github.com/recfs/recfs/index"

	"github.com/grailbio/base/recordio"
	"github.com/recfs/recfs/codec"
)

// toEntries converts grailbio header entries to recfs's.
func toEntries(h []recordio.KeyValue) []recfsrio.HeaderEntry {
	out := make([]recfsrio.HeaderEntry, len(h))
	for i, kv := range h {
		out[i] = recfsrio.HeaderEntry{Key: kv.Key, Value: kv.Value}
	}
	return out
}

// recfsWriteRio writes items with recfs's RecordIOWriter as described by s
// (the same description writeGrail takes).
func recfsWriteRio(items [][]byte, s rioSpec) ([]byte, error) {
	var buf bytes.Buffer
	w, err := recfsrio.NewWriter(&buf, recfsrio.WriterOptions{
		Header:       toEntries(s.Header),
		Transformers: s.Transformers,
		Trailer:      s.Trailer != nil,
		MaxItems:     int(s.MaxItems),
	})
	if err != nil {
		return nil, err
	}
	for i, it := range items {
		if _, err := w.Append(it); err != nil {
			return nil, fmt.Errorf("recfs Append %d: %w", i, err)
		}
		if s.FlushAfter[i] {
			if err := w.Flush(); err != nil {
				return nil, err
			}
		}
	}
	if s.Trailer != nil {
		if err := w.SetTrailer(s.Trailer); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// recfsRioRead is what recfs's scanner and reader found in a recordio file.
type recfsRioRead struct {
	Format  codec.Format
	Header  []recfsrio.HeaderEntry
	Items   [][]byte
	Trailer []byte // nil when the header promises none
	Damage  []codec.Damage
	Err     error
}

// recfsReadRio scans a recordio file (format detected) with recfs and reads
// every item and the trailer through a RecordIOReader.
func recfsReadRio(r io.ReaderAt, size int64, legacyFlate bool) recfsRioRead {
	var out recfsRioRead
	f, err := index.Detect(r, size)
	if err != nil {
		out.Err = err
		return out
	}
	out.Format = f
	o := recfsrio.Options{}
	if legacyFlate {
		o.LegacyTransform = "flate"
	}
	sc, err := recfsrio.NewScanner(r, size, f, o)
	if err != nil {
		out.Err = err
		return out
	}
	out.Header = sc.Header()
	rd, err := recfsrio.NewReader(r, size, f, sc.Transformers(), o, 4)
	if err != nil {
		out.Err = err
		return out
	}
	read := func(loc recfsrio.ItemLoc) ([]byte, error) {
		p := make([]byte, loc.Len)
		n, err := rd.ReadItem(loc, p, 0)
		if err == io.EOF && int64(n) == loc.Len {
			err = nil
		}
		return p[:n], err
	}
	if loc, ok, err := sc.Trailer(); err != nil {
		out.Err = fmt.Errorf("trailer: %w", err)
		return out
	} else if ok {
		if out.Trailer, err = read(loc); err != nil {
			out.Err = fmt.Errorf("trailer at %+v: %w", loc, err)
			return out
		}
	}
	for sc.Next() {
		loc := sc.Item()
		p, err := read(loc)
		if err != nil {
			out.Err = fmt.Errorf("item %d at %+v: %w", len(out.Items), loc, err)
			return out
		}
		out.Items = append(out.Items, p)
	}
	out.Err = sc.Err()
	out.Damage = sc.Damage()
	return out
}

// recfsReadRioBytes is recfsReadRio over an in-memory file.
func recfsReadRioBytes(b []byte, legacyFlate bool) recfsRioRead {
	return recfsReadRio(bytes.NewReader(b), int64(len(b)), legacyFlate)
}

// entriesEqual compares a grailbio header with recfs's, entry by entry, by
// key, dynamic type and value.
func entriesEqual(g []recordio.KeyValue, r []recfsrio.HeaderEntry) string {
	if len(g) != len(r) {
		return fmt.Sprintf("grailbio has %d header entries %v, recfs %d %v", len(g), g, len(r), r)
	}
	for i := range g {
		gv, rv := fmt.Sprintf("%T %v", g[i].Value, g[i].Value), fmt.Sprintf("%T %v", r[i].Value, r[i].Value)
		if g[i].Key != r[i].Key || gv != rv {
			return fmt.Sprintf("header entry %d: grailbio %q=%s, recfs %q=%s", i, g[i].Key, gv, r[i].Key, rv)
		}
	}
	return ""
}
