package recordio

import (
	"bytes"
	"slices"
	"testing"

	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// vectorDir holds the grailbio reference vectors the tests read (see
// codectest.VectorDir).
var vectorDir = filepath.Join(codectest.VectorDir(), "grailbio")

// vectorManifest is the subset of a grailbio vector manifest the tests use.
type vectorManifest struct {
	File   string `json:"file"`
	Format string `json:"format"`
	Size   int64  `json:"size"`
	Header []struct {
		Key        string          `json:"key"`
		Type       string          `json:"type"`
		Value      json.RawMessage `json:"value"`
		EncodedHex string          `json:"encoded_hex"`
	} `json:"header"`
	HeaderItem *struct {
		Hex string `json:"hex"`
	} `json:"header_item"`
	ItemCount    int              `json:"item_count"`
	Items        []manifestItem   `json:"items"`
	ItemsSummary *manifestSummary `json:"items_summary"`
	Trailer      *manifestItem    `json:"trailer"`
	Blocks       []struct {
		Offset    int64  `json:"offset"`
		Kind      string `json:"kind"`
		Chunks    int    `json:"chunks"`
		StoredLen int64  `json:"stored_len"`
		RawLen    int64  `json:"raw_len"`
		Items     int    `json:"items"`
		FirstItem int    `json:"first_item"`
	} `json:"blocks"`
	Records []struct {
		Offset     int64  `json:"offset"`
		Kind       string `json:"kind"`
		PayloadLen int64  `json:"payload_len"`
		Items      int    `json:"items"`
		FirstItem  int    `json:"first_item"`
	} `json:"records"`
	Writer struct {
		Transformers    []string `json:"transformers"`
		MaxItems        int      `json:"max_items"`
		FlushAfterItems []int    `json:"flush_after_items"`
		KeyTrailerOpt   bool     `json:"key_trailer_opt"`
		SetTrailer      bool     `json:"set_trailer"`
		API             string   `json:"api"`
		AddHeader       []struct {
			Key   string          `json:"key"`
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"add_header"`
	} `json:"writer"`
	ReaderOptions struct {
		LegacyTransform string `json:"legacy_transform"`
	} `json:"reader_options"`
}

type manifestItem struct {
	Len    int64  `json:"len"`
	SHA256 string `json:"sha256"`
	Hex    string `json:"hex"`
	Loc    *struct {
		Block int64 `json:"block"`
		Item  int   `json:"item"`
	} `json:"loc"`
}

type manifestSummary struct {
	Count         int            `json:"count"`
	TotalBytes    int64          `json:"total_bytes"`
	ConcatSHA256  string         `json:"concat_sha256"`
	LengthsSHA256 string         `json:"lengths_sha256"`
	FirstItems    []manifestItem `json:"first_items"`
	LastItems     []manifestItem `json:"last_items"`
}

// loadVectors reads every manifest and its file.
func loadVectors(t testing.TB) map[string]struct {
	m    vectorManifest
	data []byte
} {
	t.Helper()
	out := map[string]struct {
		m    vectorManifest
		data []byte
	}{}
	codectest.ReadManifests(t, "grailbio", func(p string, j []byte) {
		var m vectorManifest
		if err := json.Unmarshal(j, &m); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		data, err := os.ReadFile(filepath.Join(vectorDir, m.File))
		if err != nil {
			t.Fatal(err)
		}
		out[m.File] = struct {
			m    vectorManifest
			data []byte
		}{m, data}
	})
	return out
}

// readItems reads every item s finds through rd, whole: a read short of
// the item, or failing (but with io.EOF for an empty item), fails t.
func readItems(t testing.TB, s *Scanner, rd *Reader) ([][]byte, []ItemLoc) {
	t.Helper()
	var items [][]byte
	var locs []ItemLoc
	for s.Next() {
		loc := s.Item()
		b := make([]byte, loc.Len)
		if n, err := rd.ReadItem(loc, b, 0); int64(n) != loc.Len || (err != nil && !(err == io.EOF && loc.Len == 0)) {
			t.Fatalf("ReadItem(%+v): n=%d err=%v", loc, n, err)
		}
		items, locs = append(items, b), append(locs, loc)
	}
	return items, locs
}

// readAllItems scans data and reads every item through a Reader.
func readAllItems(t testing.TB, data []byte, o Options) (*Scanner, []ItemLoc, [][]byte) {
	t.Helper()
	s, err := NewScanner(bytes.NewReader(data), int64(len(data)), codec.Unknown, o)
	if err != nil {
		t.Fatalf("NewScanner: %v", err)
	}
	rd, err := NewReader(bytes.NewReader(data), int64(len(data)), s.Format(), s.Transformers(), o, 4)
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	items, locs := readItems(t, s, rd)
	if err := s.Err(); err != nil {
		t.Fatalf("scan: %v", err)
	}
	return s, locs, items
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// manifestValue converts a manifest header value to the Go type the
// scanner returns.
func manifestValue(t *testing.T, typ string, raw json.RawMessage) any {
	var v any
	var err error
	switch typ {
	case "bool":
		var b bool
		err, v = json.Unmarshal(raw, &b), b
		if err == nil {
			v = b
		}
	case "int":
		var i int64
		err = json.Unmarshal(raw, &i)
		v = i
	case "uint":
		var u uint64
		err = json.Unmarshal(raw, &u)
		v = u
	case "string":
		var s string
		err = json.Unmarshal(raw, &s)
		v = s
	default:
		t.Fatalf("unknown manifest type %q", typ)
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRecordIOVectors(t *testing.T) {
	t.Parallel()
	for name, v := range loadVectors(t) {
		t.Run(name, func(t *testing.T) {
			m := v.m
			if int64(len(v.data)) != m.Size {
				t.Fatalf("file size %d, manifest %d", len(v.data), m.Size)
			}
			o := Options{LegacyTransform: m.ReaderOptions.LegacyTransform, Strict: true}
			s, locs, items := readAllItems(t, v.data, o)
			if d := s.Damage(); len(d) != 0 {
				t.Fatalf("damage in a clean vector: %v", d)
			}
			wantFormat := codec.RecordIO
			if strings.Contains(m.Format, "legacy") {
				wantFormat = codec.RecordIOLegacy
			}
			if s.Format() != wantFormat {
				t.Errorf("format %v, want %v", s.Format(), wantFormat)
			}
			// Header.
			h := s.Header()
			if len(h) != len(m.Header) {
				t.Fatalf("header has %d entries, manifest %d", len(h), len(m.Header))
			}
			for i, e := range m.Header {
				want := manifestValue(t, e.Type, e.Value)
				if h[i].Key != e.Key || h[i].Value != want {
					t.Errorf("header[%d] = %q:%#v, want %q:%#v", i, h[i].Key, h[i].Value, e.Key, want)
				}
				enc, err := encodeHeaderItem([]HeaderEntry{h[i]})
				if err != nil {
					t.Fatal(err)
				}
				if got := hex.EncodeToString(enc[2:]); got != e.EncodedHex {
					t.Errorf("header[%d] re-encodes to %s, want %s", i, got, e.EncodedHex)
				}
			}
			if m.HeaderItem != nil {
				enc, _ := encodeHeaderItem(h)
				if got := hex.EncodeToString(enc); got != m.HeaderItem.Hex {
					t.Errorf("header item %s, want %s", got, m.HeaderItem.Hex)
				}
			}
			// Items.
			if len(items) != m.ItemCount {
				t.Fatalf("%d items, manifest %d", len(items), m.ItemCount)
			}
			for i, it := range m.Items {
				if int64(len(items[i])) != it.Len || sha(items[i]) != it.SHA256 {
					t.Errorf("item %d: len %d sha %s, want %d %s", i, len(items[i]), sha(items[i]), it.Len, it.SHA256)
				}
				if it.Hex != "" && hex.EncodeToString(items[i]) != it.Hex {
					t.Errorf("item %d hex mismatch", i)
				}
				if it.Loc != nil && (locs[i].Block != it.Loc.Block || locs[i].Item != it.Loc.Item) {
					t.Errorf("item %d loc %d/%d, want %d/%d", i, locs[i].Block, locs[i].Item, it.Loc.Block, it.Loc.Item)
				}
			}
			if sm := m.ItemsSummary; sm != nil {
				var total int64
				cat, lens := sha256.New(), sha256.New()
				for _, it := range items {
					total += int64(len(it))
					cat.Write(it)
					fmt.Fprintf(lens, "%d\n", len(it))
				}
				if len(items) != sm.Count || total != sm.TotalBytes ||
					hex.EncodeToString(cat.Sum(nil)) != sm.ConcatSHA256 || hex.EncodeToString(lens.Sum(nil)) != sm.LengthsSHA256 {
					t.Errorf("items summary mismatch: count %d total %d", len(items), total)
				}
				for i, it := range sm.FirstItems {
					if sha(items[i]) != it.SHA256 {
						t.Errorf("first item %d sha mismatch", i)
					}
				}
				for i, it := range sm.LastItems {
					if sha(items[len(items)-len(sm.LastItems)+i]) != it.SHA256 {
						t.Errorf("last item %d sha mismatch", i)
					}
				}
			}
			// Blocks: every body block shows up with its item count.
			seen := map[int64]Block{}
			s2, _ := NewScanner(bytes.NewReader(v.data), int64(len(v.data)), codec.Unknown, o)
			for s2.Next() {
				seen[s2.Block().Off] = s2.Block()
			}
			nb := 0
			for _, b := range m.Blocks {
				if b.Kind != "body" {
					continue
				}
				nb++
				got, ok := seen[b.Offset]
				if b.Items > 0 && (!ok || got.Chunks != b.Chunks || got.Items != b.Items || got.RawLen != b.RawLen || got.Transformed != (b.StoredLen != b.RawLen || len(s.Transformers()) > 0)) {
					t.Errorf("block at %d: got %+v, manifest %+v", b.Offset, got, b)
				}
			}
			for _, r := range m.Records {
				got, ok := seen[r.Offset]
				if !ok || got.Items != r.Items {
					t.Errorf("record at %d: got %+v, manifest %+v", r.Offset, got, r)
				}
			}
			if wantFormat == codec.RecordIO && s.Blocks() != int64(nb) {
				t.Errorf("Blocks() = %d, manifest has %d body blocks", s.Blocks(), nb)
			}
			// Trailer.
			loc, ok, err := s.Trailer()
			if err != nil {
				t.Fatalf("Trailer: %v", err)
			}
			if ok != (m.Trailer != nil) {
				t.Fatalf("trailer present %v, manifest %v", ok, m.Trailer != nil)
			}
			if ok {
				rd, _ := NewReader(bytes.NewReader(v.data), int64(len(v.data)), codec.RecordIO, s.Transformers(), o, 2)
				buf := make([]byte, loc.Len)
				if _, err := rd.ReadItem(loc, buf, 0); err != nil && loc.Len > 0 {
					t.Fatal(err)
				}
				if loc.Len != m.Trailer.Len || sha(buf) != m.Trailer.SHA256 {
					t.Errorf("trailer len %d sha %s, want %d %s", loc.Len, sha(buf), m.Trailer.Len, m.Trailer.SHA256)
				}
				if last := m.Blocks[len(m.Blocks)-1]; last.Kind != "trailer" || last.Offset != loc.Block {
					t.Errorf("trailer block at %d, manifest %+v", loc.Block, last)
				}
			}
		})
	}
}

// makeRio writes a file of items with the writer.
func makeRio(t testing.TB, items [][]byte, o WriterOptions, trailer []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := NewWriter(&out, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if _, err := w.Append(it); err != nil {
			t.Fatal(err)
		}
	}
	if trailer != nil {
		if err := w.SetTrailer(trailer); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func equalItems(a, b [][]byte) bool {
	return slices.EqualFunc(a, b, func(x, y []byte) bool { return bytes.Equal(x, y) })
}
