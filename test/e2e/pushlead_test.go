package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPushKeepsAheadOfReader: once a reader has read two records in
// inode-number order, the server keeps pushing the records after them
// without waiting for further READs (reads that hit the page cache send
// none, so they cannot pace it): a reader that then goes through the next
// 2,000 records in that order sends (almost) no READ for them — at most
// one in a hundred, for a loaded machine — and gets each record's own
// bytes. The first pusher pushed 128 records per in-order READ and so left
// two READs at the end of every 128 records (72 here).
func TestPushKeepsAheadOfReader(t *testing.T) {
	needFUSE(t)
	const n, reads = 3000, 2000
	recs, _ := warmRecords(n)
	m, snap, _ := countingLog(t, "lead.log", recs, "--no-cache")
	ents, err := os.ReadDir(m.dir)
	if err != nil {
		t.Fatal(err)
	}
	files := recordsByInode(t, m.dir, ents)
	if len(files) != n {
		t.Fatalf("%d record files listed, want %d", len(files), n)
	}
	read := func(f inodeFile) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(m.dir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, recs[f.rec]) {
			t.Fatalf("record %s: %d bytes, not the record's %d", f.name, len(b), len(recs[f.rec]))
		}
	}
	before := snap()
	read(files[0])
	read(files[1])
	if d := snap().sub(before); d["READ"] != 2 {
		t.Fatalf("the first two records sent %d READ, want one each (%v)", d["READ"], d)
	}
	// The pusher needs no READ to go on: wait until it has stored the
	// records about to be read (NOTIFY_STORE counts the records stored).
	waitFor(t, 30*time.Second, 20*time.Millisecond, func() (bool, string) {
		d := snap().sub(before)
		return d["NOTIFY_STORE"] >= reads, fmt.Sprintf("%d records pushed after the first two were read, want %d (%v)", d["NOTIFY_STORE"], reads, d)
	})
	before = snap()
	for _, f := range files[2 : 2+reads] {
		read(f)
	}
	d := snap().sub(before)
	t.Logf("%d records read in inode order after the first two: %v", reads, d)
	if d["READ"] > reads/100 {
		t.Errorf("%d records read in inode order after the first two sent %d READ (%v): want them pushed ahead", reads, d["READ"], d)
	}
}
