package codectest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Expect is what a vector's manifest says a reader must return, in one
// shape for both folders: a leveldb manifest lists each record or gives
// an aggregate of them, a grailbio one lists each item or gives a summary.
type Expect struct {
	Name    string   // FOLDER/FILE, such as "leveldb/goleveldb-basic.log"
	File    string   // the vector's path: FILE beside its manifest
	Count   int64    // records (items)
	Lens    []int64  // each record's length, when listed
	Sums    []string // each record's SHA-256 (hex), when listed
	Concat  string   // unlisted: SHA-256 of every payload in order
	LensSum string   // unlisted: SHA-256 of the decimal lengths
	// LensEnd: the unlisted lengths each end with "\n" (grailbio), rather
	// than being joined by it (leveldb).
	LensEnd bool
	Trailer *LenSum       // the trailer; nil without one
	Header  []HeaderEntry // a recordio header's entries, in order
	Legacy  string        // the reader option legacy_transform ("" or "flate")
}

// LenSum is a length and a SHA-256 (hex) of a manifest.
type LenSum struct {
	Len    int64  `json:"len"`
	Sha256 string `json:"sha256"`
}

// HeaderEntry is a recordio header entry of a manifest.
type HeaderEntry struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// aggregate is the unlisted form of a manifest's records or items.
type aggregate struct {
	Count  int64  `json:"count"`
	Concat string `json:"concat_sha256"`
	Lens   string `json:"lengths_sha256"`
}

// LoadExpect reads the manifest at path, in the leveldb or the grailbio
// vector folder (told by the folder's name); a manifest it cannot read
// fails t.
func LoadExpect(t testing.TB, path string) Expect {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		File          string          `json:"file"`
		Records       json.RawMessage `json:"records"`
		Items         []LenSum        `json:"items"`
		ItemCount     int64           `json:"item_count"`
		Summary       *aggregate      `json:"items_summary"`
		Trailer       *LenSum         `json:"trailer"`
		Header        []HeaderEntry   `json:"header"`
		ReaderOptions struct {
			LegacyTransform string `json:"legacy_transform"`
		} `json:"reader_options"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	dir := filepath.Dir(path)
	e := Expect{Name: filepath.Base(dir) + "/" + doc.File, File: filepath.Join(dir, doc.File),
		Trailer: doc.Trailer, Header: doc.Header, Legacy: doc.ReaderOptions.LegacyTransform}
	var list []LenSum
	var agg aggregate
	switch {
	case filepath.Base(dir) == "grailbio":
		e.Count, list = doc.ItemCount, doc.Items
		if doc.Summary != nil {
			agg, e.LensEnd = *doc.Summary, true
		}
	case json.Unmarshal(doc.Records, &list) == nil:
		e.Count = int64(len(list))
	default:
		if err := json.Unmarshal(doc.Records, &agg); err != nil {
			t.Fatalf("%s: records: %v", path, err)
		}
		e.Count = agg.Count
	}
	if list != nil {
		for _, r := range list {
			e.Lens, e.Sums = append(e.Lens, r.Len), append(e.Sums, r.Sha256)
		}
	} else {
		e.Concat, e.LensSum = agg.Concat, agg.Lens
	}
	return e
}

// Payloads checks a vector's payloads, given in order, against its
// manifest: each listed record's length and SHA-256 as it comes (Add),
// or the aggregate hashes of an unlisted manifest at the end (Done).
type Payloads struct {
	e      Expect
	n      int64
	concat hash.Hash
	lens   []string
}

// Payloads returns a check of the vector's payloads.
func (e Expect) Payloads() *Payloads { return &Payloads{e: e, concat: sha256.New()} }

// Add checks the next payload, b.
func (p *Payloads) Add(b []byte) error {
	n := p.n
	p.n++
	if p.e.Lens == nil {
		p.concat.Write(b)
		p.lens = append(p.lens, strconv.Itoa(len(b)))
		return nil
	}
	if n >= int64(len(p.e.Lens)) {
		return fmt.Errorf("record %d: the manifest lists %d", n, len(p.e.Lens))
	}
	if sum := hexSum(b); int64(len(b)) != p.e.Lens[n] || sum != p.e.Sums[n] {
		return fmt.Errorf("record %d: len %d sha256 %s; manifest len %d sha256 %s", n, len(b), sum, p.e.Lens[n], p.e.Sums[n])
	}
	return nil
}

// Done checks the aggregate hashes of an unlisted manifest (a listed one
// was checked by Add); it reports each that differs.
func (p *Payloads) Done() error {
	if p.e.Lens != nil || p.e.Concat == "" {
		return nil
	}
	joined := strings.Join(p.lens, "\n")
	if p.e.LensEnd && len(p.lens) > 0 {
		joined += "\n"
	}
	var errs []error
	if got := hex.EncodeToString(p.concat.Sum(nil)); got != p.e.Concat {
		errs = append(errs, fmt.Errorf("concatenated payloads sha256 %s, manifest %s", got, p.e.Concat))
	}
	if got := hexSum([]byte(joined)); got != p.e.LensSum {
		errs = append(errs, fmt.Errorf("lengths sha256 %s, manifest %s", got, p.e.LensSum))
	}
	return errors.Join(errs...)
}

// hexSum is b's SHA-256 in hex.
func hexSum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
