package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// expect is what a vector manifest says the mount must show.
type expect struct {
	file    string
	count   int64
	lens    []int64  // per record, when listed
	sums    []string // per record SHA-256, when listed
	concat  string   // aggregate manifests: SHA-256 of all payloads in order
	lensSum string   // aggregate manifests: SHA-256 of the decimal lengths
	lensEnd bool     // lengths end with "\n" each (grailbio) rather than joined (leveldb)
	trailer *struct {
		Len    int64  `json:"len"`
		Sha256 string `json:"sha256"`
	}
	header []struct {
		Key string `json:"key"`
	}
}

type lenSum struct {
	Len    int64  `json:"len"`
	Sha256 string `json:"sha256"`
}

type aggregate struct {
	Count  int64  `json:"count"`
	Concat string `json:"concat_sha256"`
	Lens   string `json:"lengths_sha256"`
}

// loadManifest reads one manifest of either folder.
func loadManifest(t *testing.T, path string) expect {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		File      string          `json:"file"`
		Records   json.RawMessage `json:"records"`
		Items     []lenSum        `json:"items"`
		ItemCount int64           `json:"item_count"`
		Summary   *aggregate      `json:"items_summary"`
		Trailer   *struct {
			Len    int64  `json:"len"`
			Sha256 string `json:"sha256"`
		} `json:"trailer"`
		Header []struct {
			Key string `json:"key"`
		} `json:"header"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	e := expect{file: filepath.Join(filepath.Dir(path), doc.File), trailer: doc.Trailer, header: doc.Header}
	var list []lenSum
	var agg aggregate
	switch {
	case strings.Contains(path, "/grailbio/"):
		e.count = doc.ItemCount
		list = doc.Items
		if doc.Summary != nil {
			agg, e.lensEnd = *doc.Summary, true
		}
	case json.Unmarshal(doc.Records, &list) == nil:
		e.count = int64(len(list))
	default:
		if err := json.Unmarshal(doc.Records, &agg); err != nil {
			t.Fatalf("%s: records: %v", path, err)
		}
		e.count = agg.Count
	}
	if list != nil {
		for _, r := range list {
			e.lens, e.sums = append(e.lens, r.Len), append(e.sums, r.Sha256)
		}
	} else {
		e.concat, e.lensSum = agg.Concat, agg.Lens
	}
	return e
}

func hexSum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// recordName is the spec's name rule, written independently of package fs:
// zero-padded decimal of width max(6, digits(count-1)).
func recordName(n, count int64) string {
	w := len(strconv.FormatInt(max(count-1, 0), 10))
	return fmt.Sprintf("%0*d", max(w, 6), n)
}

// TestVectors mounts every reference vector by its path and compares what
// the mount shows with the manifest, byte for byte.
func TestVectors(t *testing.T) {
	needFUSE(t)
	var manifests []string
	for _, dir := range []string{"leveldb", "grailbio"} {
		ms, _ := filepath.Glob(filepath.Join(vectors, dir, "*.json"))
		if len(ms) == 0 {
			t.Fatalf("no manifests in %s (shared/ must sit beside the checkout)", filepath.Join(vectors, dir))
		}
		for _, m := range ms {
			if filepath.Base(m) != "index.json" {
				manifests = append(manifests, m)
			}
		}
	}
	eachBackend(t, func(t *testing.T, backend string) {
		for _, mpath := range manifests {
			e := loadManifest(t, mpath)
			t.Run(filepath.Base(e.file), func(t *testing.T) {
				mnt := newMountDir(t)
				src, err := filepath.Abs(e.file)
				if err != nil {
					t.Fatal(err)
				}
				startMount(t, src, mnt, "--no-cache", "--backend", backend)
				checkRecordDir(t, mnt, e)
			})
		}
	})
}

// checkRecordDir compares a mounted record directory with a manifest.
func checkRecordDir(t *testing.T, mnt string, e expect) {
	t.Helper()
	ents, err := os.ReadDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	want := e.count + 1 // .recfs
	if e.trailer != nil {
		want++
	}
	if int64(len(ents)) != want {
		t.Fatalf("%d entries, want %d records + .recfs (+ trailer)", len(ents), e.count)
	}
	var recs []os.DirEntry
	for _, ent := range ents {
		if ent.Name() != ".recfs" && ent.Name() != "trailer" {
			recs = append(recs, ent)
		}
	}
	for i, ent := range recs {
		if ent.Name() != recordName(int64(i), e.count) || ent.IsDir() {
			t.Fatalf("entry %d is %q (dir %v), want file %q", i, ent.Name(), ent.IsDir(), recordName(int64(i), e.count))
		}
	}
	concat := sha256.New()
	var lens []string
	for n := int64(0); n < e.count; n++ {
		p := filepath.Join(mnt, recordName(n, e.count))
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("record %d: %v", n, err)
		}
		if fi.Size() != int64(len(b)) || fi.Mode().Perm() != 0o444 {
			t.Fatalf("record %d: stat size %d mode %v, read %d bytes", n, fi.Size(), fi.Mode(), len(b))
		}
		if e.lens != nil {
			if int64(len(b)) != e.lens[n] || hexSum(b) != e.sums[n] {
				t.Fatalf("record %d: len %d sha256 %s; manifest len %d sha256 %s", n, len(b), hexSum(b), e.lens[n], e.sums[n])
			}
		} else {
			concat.Write(b)
			lens = append(lens, strconv.Itoa(len(b)))
		}
	}
	if e.lens == nil && e.concat != "" {
		joined := strings.Join(lens, "\n")
		if e.lensEnd && len(lens) > 0 {
			joined += "\n"
		}
		if got := hex.EncodeToString(concat.Sum(nil)); got != e.concat {
			t.Errorf("concatenated payloads sha256 %s, manifest %s", got, e.concat)
		}
		if got := hexSum([]byte(joined)); got != e.lensSum {
			t.Errorf("lengths sha256 %s, manifest %s", got, e.lensSum)
		}
	}
	if e.count > 0 { // an unpadded name finds the same record
		last := e.count - 1
		a, err1 := os.ReadFile(filepath.Join(mnt, strconv.FormatInt(last, 10)))
		b, err2 := os.ReadFile(filepath.Join(mnt, recordName(last, e.count)))
		if err1 != nil || err2 != nil || string(a) != string(b) {
			t.Errorf("unpadded lookup of %d: %v %v", last, err1, err2)
		}
	}
	if e.trailer != nil {
		b, err := os.ReadFile(filepath.Join(mnt, "trailer", "000000"))
		if err != nil || int64(len(b)) != e.trailer.Len || hexSum(b) != e.trailer.Sha256 {
			t.Errorf("trailer/000000: %d bytes, %v; manifest %d bytes", len(b), err, e.trailer.Len)
		}
	} else if _, err := os.Stat(filepath.Join(mnt, "trailer")); !os.IsNotExist(err) {
		t.Errorf("trailer/ exists without a trailer: %v", err)
	}
	info := infoLines(t, filepath.Join(mnt, ".recfs"))
	if got := info["records"]; len(got) != 1 || got[0] != strconv.FormatInt(e.count, 10) {
		t.Errorf(".recfs records: %v, want %d", got, e.count)
	}
	for _, h := range e.header {
		if len(info["header."+h.Key]) == 0 {
			t.Errorf(".recfs lacks header key %q", h.Key)
		}
	}
}
