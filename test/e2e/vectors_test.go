package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
)

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
			e := codectest.LoadExpect(t, mpath)
			t.Run(filepath.Base(e.File), func(t *testing.T) {
				mnt := newMountDir(t)
				src, err := filepath.Abs(e.File)
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
func checkRecordDir(t *testing.T, mnt string, e codectest.Expect) {
	t.Helper()
	ents, err := os.ReadDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	want := e.Count + 1 // .recfs
	if e.Trailer != nil {
		want++
	}
	if int64(len(ents)) != want {
		t.Fatalf("%d entries, want %d records + .recfs (+ trailer)", len(ents), e.Count)
	}
	var recs []os.DirEntry
	for _, ent := range ents {
		if ent.Name() != ".recfs" && ent.Name() != "trailer" {
			recs = append(recs, ent)
		}
	}
	for i, ent := range recs {
		if ent.Name() != recordName(int64(i), e.Count) || ent.IsDir() {
			t.Fatalf("entry %d is %q (dir %v), want file %q", i, ent.Name(), ent.IsDir(), recordName(int64(i), e.Count))
		}
	}
	payloads := e.Payloads()
	for n := int64(0); n < e.Count; n++ {
		p := filepath.Join(mnt, recordName(n, e.Count))
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
		if err := payloads.Add(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := payloads.Done(); err != nil {
		t.Error(err)
	}
	if e.Count > 0 { // an unpadded name finds the same record
		last := e.Count - 1
		a, err1 := os.ReadFile(filepath.Join(mnt, strconv.FormatInt(last, 10)))
		b, err2 := os.ReadFile(filepath.Join(mnt, recordName(last, e.Count)))
		if err1 != nil || err2 != nil || string(a) != string(b) {
			t.Errorf("unpadded lookup of %d: %v %v", last, err1, err2)
		}
	}
	if e.Trailer != nil {
		b, err := os.ReadFile(filepath.Join(mnt, "trailer", "000000"))
		if err != nil || int64(len(b)) != e.Trailer.Len || hexSum(b) != e.Trailer.Sha256 {
			t.Errorf("trailer/000000: %d bytes, %v; manifest %d bytes", len(b), err, e.Trailer.Len)
		}
	} else if _, err := os.Stat(filepath.Join(mnt, "trailer")); !os.IsNotExist(err) {
		t.Errorf("trailer/ exists without a trailer: %v", err)
	}
	info := infoLines(t, filepath.Join(mnt, ".recfs"))
	if got := info["records"]; len(got) != 1 || got[0] != strconv.FormatInt(e.Count, 10) {
		t.Errorf(".recfs records: %v, want %d", got, e.Count)
	}
	for _, h := range e.Header {
		if len(info["header."+h.Key]) == 0 {
			t.Errorf(".recfs lacks header key %q", h.Key)
		}
	}
}
