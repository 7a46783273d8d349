package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/test/internal/vgw"
)

// lieRecords are 1,000 records of distinct contents; record 1 ends the
// first 32 KiB block exactly.
func lieRecords() [][]byte {
	recs := [][]byte{bytes.Repeat([]byte("0"), 1000), bytes.Repeat([]byte("1"), 32768-14-1000)}
	for i := 2; i < 1000; i++ {
		recs = append(recs, fmt.Appendf(nil, "record %04d %s", i, strings.Repeat("x", i%97)))
	}
	return recs
}

// etagOf returns the ETag the server gives key.
func etagOf(t *testing.T, srv *vgw.Server, key string) string {
	t.Helper()
	out, err := srv.Client.API().HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(vgw.Bucket), Key: aws.String(key)})
	if err != nil || out.ETag == nil {
		t.Fatalf("head %s: %v", key, err)
	}
	return *out.ETag
}

// retag rewrites the object version a saved index names (etag=OLD …) to
// name the ETag new, and puts its checksum right: what an attacker who
// writes the sidecar does.
func retag(t *testing.T, idx []byte, old, new string) []byte {
	t.Helper()
	i := bytes.Index(idx, []byte("etag="+old))
	if i < 4 {
		t.Fatalf("no etag=%s in the saved index", old)
	}
	n := int(binary.LittleEndian.Uint32(idx[i-4:]))
	ver := string(idx[i : i+n])
	nv := strings.Replace(ver, old, new, 1)
	// The file is the body, its checksum, the seal its maker added, the
	// blob region, then the blob's length (8 bytes) and the seal's (one
	// byte); the forger has no key, so the forged file is unsealed.
	blobLen := int(binary.LittleEndian.Uint64(idx[len(idx)-9:]))
	blob := idx[len(idx)-9-blobLen : len(idx)-9]
	body := idx[:len(idx)-9-blobLen-int(idx[len(idx)-1])]
	out := slices.Concat(idx[:i-4], binary.LittleEndian.AppendUint32(nil, uint32(len(nv))), []byte(nv), idx[i+n:len(body)-4])
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, crc32.MakeTable(crc32.Castagnoli)))
	out = append(out, blob...)
	return append(binary.LittleEndian.AppendUint64(out, uint64(blobLen)), 0)
}

// TestS3SidecarLies (../shared/repro/14): a published index made from other
// bytes of the same size, then given the object's ETag and a right
// checksum, is believed by nobody: records hidden in the damage it claims
// are found when it is loaded (info counts them all, one log line says the
// index was dropped), and records it renumbers without a gap of its own
// (a block-ending record zeroed into padding) when a record past them is
// first read; every record is served as the object has it, by cat and by a
// mount.
func TestS3SidecarLies(t *testing.T) {
	needFUSE(t)
	srv := startS3(t)
	recs := lieRecords()
	good, _ := recfile.LogBytes(t, recs, leveldb.WriterOptions{})
	flipped := slices.Clone(good)
	flipped[7+1000+7+20] ^= 0x20 // in record 1
	padded := slices.Clone(good)
	clear(padded[1007:32768]) // record 1 read as the block's zero padding
	for _, c := range []struct {
		name  string
		other []byte
		found string // when the lie is found: "load" or "read"
	}{{"hidden in damage", flipped, "load"}, {"renumbered", padded, "read"}} {
		key := "lie-" + strings.ReplaceAll(c.name, " ", "-") + ".log"
		url := vgw.URL(key)
		srv.Put(t, key, c.other)
		r := runRecfs(t, "index", "--json", "--cache-dir", t.TempDir(), "--publish", url)
		var ix struct {
			CacheFile string `json:"cache_file"`
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &ix) != nil {
			t.Fatalf("index --publish: %d %s %s", r.code, r.stdout, r.stderr)
		}
		idx, err := os.ReadFile(ix.CacheFile)
		if err != nil {
			t.Fatal(err)
		}
		otherTag := etagOf(t, srv, key)
		srv.Put(t, key, good)
		srv.Put(t, key+".recfs-idx", retag(t, idx, otherTag, etagOf(t, srv, key)))

		cache := t.TempDir()
		info := func() (map[string]any, string) {
			t.Helper()
			r := runRecfs(t, "info", "--json", "--cache-dir", cache, url)
			var m map[string]any
			if r.code != 0 || json.Unmarshal([]byte(r.stdout), &m) != nil {
				t.Fatalf("%s: info: %d %s %s", c.name, r.code, r.stdout, r.stderr)
			}
			return m, r.stderr
		}
		m, log := info()
		if c.found == "load" {
			if fmt.Sprint(m["records"]) != "1000" || len(m["damage"].([]any)) != 0 || strings.Count(log, "does not match it") != 1 {
				t.Fatalf("%s: info: %v records, damage %v, log %q", c.name, m["records"], m["damage"], log)
			}
		} else if m["index_source"] != "cached" || fmt.Sprint(m["records"]) != "999" {
			t.Fatalf("%s: the lie was not loaded: %v records, index %v", c.name, m["records"], m["index_source"])
		}
		for _, n := range []int{1, 2, 600} {
			r := runRecfs(t, "cat", "--cache-dir", cache, url, fmt.Sprint(n))
			if r.code != 0 || r.stdout != string(recs[n]) {
				t.Fatalf("%s: cat %d: exit %d, %.30q, want %.30q\n%s", c.name, n, r.code, r.stdout, recs[n], r.stderr)
			}
			if n == 1 && c.found == "read" && strings.Count(r.stderr, "does not match it") != 1 {
				t.Fatalf("%s: the first read past the lie logged %q", c.name, r.stderr)
			}
		}
		if m, _ := info(); fmt.Sprint(m["records"]) != "1000" || m["index_source"] != "cached" {
			t.Fatalf("%s: after the lie: %v records, index %v", c.name, m["records"], m["index_source"])
		}

		t.Setenv("XDG_CACHE_HOME", t.TempDir()) // a mount on another machine
		mnt := newMountDir(t)
		mt := startMount(t, url, mnt)
		for _, n := range []int64{1, 999, 2} {
			name := filepath.Join(mnt, recordName(n, 1000))
			got, err := os.ReadFile(name)
			if err != nil && n == 1 && c.found == "read" {
				// The read that finds the lie fails (EIO): what the kernel
				// was told of it was the lie's. Read again.
				got, err = os.ReadFile(name)
			}
			if err != nil || !bytes.Equal(got, recs[n]) {
				t.Fatalf("%s: mount: record %d: %d bytes %.30q, %v", c.name, n, len(got), got, err)
			}
		}
		unmountAndWait(t, mt)
	}
}
