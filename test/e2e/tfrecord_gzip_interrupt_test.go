package e2e

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/tfrecord"
)

// bitWriter writes a DEFLATE bit stream: values LSB first, Huffman
// codes MSB first.
type bitWriter struct {
	w    *bufio.Writer
	acc  uint64
	bits uint
}

func (b *bitWriter) bits1(v uint64, n uint) {
	b.acc |= v << b.bits
	b.bits += n
	for b.bits >= 8 {
		b.w.WriteByte(byte(b.acc))
		b.acc >>= 8
		b.bits -= 8
	}
}

// code writes the n-bit Huffman code c.
func (b *bitWriter) code(c uint64, n uint) {
	r := uint64(0)
	for i := uint(0); i < n; i++ {
		r = r<<1 | c>>i&1
	}
	b.bits1(r, n)
}

// literal writes byte v in the fixed Huffman code.
func (b *bitWriter) literal(v byte) {
	if v < 144 {
		b.code(0x30+uint64(v), 8)
	} else {
		b.code(0x190+uint64(v)-144, 9)
	}
}

// zeroRecordShard writes a gzipped TFRecord file of a record "before" and
// a record of 1+258*runs zeros, as one DEFLATE block of the fixed Huffman
// code (13 bits for each 258 zeros): its output has no block boundary, so
// the index has one checkpoint for all of it, and a read of the record's
// end decompresses the whole record. The records after, if any, follow
// in the same block: reading any of them decompresses the zeros too. No
// encoder of ours makes such a block; a hostile or unusual one can.
func zeroRecordShard(t *testing.T, runs int64, after ...[]byte) (string, int64) {
	t.Helper()
	size := 1 + 258*runs
	path := filepath.Join(t.TempDir(), "zeros.tfrecord.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	w.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}) // gzip header, no name
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	mask := func(c uint32) uint32 { return (c>>15 | c<<17) + 0xa282ead8 }
	var head [12]byte
	binary.LittleEndian.PutUint64(head[:8], uint64(size))
	binary.LittleEndian.PutUint32(head[8:], mask(crc32.Checksum(head[:8], castagnoli)))
	pre := append(tfrecord.AppendRecord(nil, []byte("before")), head[:]...)
	// The member's CRC-32 and the record's CRC-32C of its zeros.
	sum := crc32.ChecksumIEEE(pre)
	dsum := uint32(0)
	zeros := make([]byte, 1<<20)
	for left := size; left > 0; left -= int64(len(zeros)) {
		z := zeros[:min(int64(len(zeros)), left)]
		sum = crc32.Update(sum, crc32.IEEETable, z)
		dsum = crc32.Update(dsum, castagnoli, z)
	}
	var tail [4]byte
	binary.LittleEndian.PutUint32(tail[:], mask(dsum))
	post := tail[:]
	for _, r := range after {
		post = tfrecord.AppendRecord(post, r)
	}
	sum = crc32.Update(sum, crc32.IEEETable, post)
	b := &bitWriter{w: w}
	b.bits1(1, 1) // final block
	b.bits1(1, 2) // fixed Huffman codes
	for _, c := range pre {
		b.literal(c)
	}
	b.literal(0)
	for range runs {
		b.code(0xc5, 8) // length 258 (symbol 285)
		b.code(0, 5)    // distance 1
	}
	for _, c := range post {
		b.literal(c)
	}
	b.code(0, 7) // end of block
	b.bits1(0, 7)
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], sum)
	binary.LittleEndian.PutUint32(trailer[4:], uint32(int64(len(pre))+size+int64(len(post))))
	w.Write(trailer[:])
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return path, size
}

// TestTFRecordGzipReadInterrupted: a reader killed in the middle of a long
// read through a mount (the last 4 KiB of an 8 GiB record of zeros in a
// gzip shard: one checkpoint, so the read decompresses the whole record)
// has the kernel send FUSE INTERRUPT, which stops the decompression of
// that read: the mount logs the read stopped before the offset it wanted,
// reads at most busyKillRead bytes after the kill, and goes on serving. Both backends. The records are opened for direct I/O (a
// --follow mount): a page-cache read goes to the server as readahead,
// which the kernel does not interrupt.
func TestTFRecordGzipReadInterrupted(t *testing.T) {
	needFUSE(t)
	src, size := zeroRecordShard(t, busyRuns)
	cache := t.TempDir()
	stopped := regexp.MustCompile(`decompression stopped at decompressed offset (\d+) \(the read wanted (\d+)\)`)
	eachBackend(t, func(t *testing.T, backend string) {
		mnt := newMountDir(t)
		m := startMount(t, src, mnt, "--follow", "--cache-dir", cache, "--backend", backend)
		if b, err := os.ReadFile(filepath.Join(mnt, "0")); err != nil || string(b) != "before" {
			t.Fatalf("record 0: %q, %v", b, err)
		}
		dd := exec.Command("dd", "if="+filepath.Join(mnt, "1"), "of=/dev/null", "bs=4096", "count=1",
			"skip="+strconv.FormatInt(size/4096-1, 10))
		killWhenBusy(t, m, dd, "reader", busyKillRead)
		sm := stopped.FindStringSubmatch(m.stderr.String())
		if sm == nil {
			t.Fatalf("the stopped read's line names no offsets:\n%s", m.stderr)
		}
		reached, _ := strconv.ParseInt(sm[1], 10, 64)
		wanted, _ := strconv.ParseInt(sm[2], 10, 64)
		if reached >= wanted {
			t.Errorf("the read decompressed to %d, the offset it wanted is %d: it ran to the end", reached, wanted)
		}
		if b, err := os.ReadFile(filepath.Join(mnt, "0")); err != nil || string(b) != "before" {
			t.Fatalf("record 0 after the interrupted read: %q, %v", b, err)
		}
		t.Logf("%s: the read stopped at decompressed offset %d of %d", backend, reached, wanted)
	})
}

// busyRuns is the zero runs of the record the busy-kill tests read: 8
// GiB of zeros, about 2 s of processor time to inflate here (52 MB of
// compressed source), so that a server that does not stop reads well over
// busyKillRead after the kill.
const busyRuns = 32_000_000

// busyKillRead bounds the bytes the server reads (rchar) after a
// busy-kill of a read or stat: a stopped inflate reads on for at most a
// few readAheadChunk (1 MiB) of its source, the rest of the record is
// tens of megabytes (a server that ran on read 49 MiB after the kill).
// Bytes, not processor time: they do not depend on the machine's load.
const busyKillRead = 16 << 20

// killWhenBusy starts c, a client whose request keeps the mount's server
// decompressing, kills it once the server has spent 300ms of processor
// time since, and checks what an interrupted request must give: c exits
// within exitTimeout, the mount logs the stopped decompression, and the
// server reads at most bound bytes after the kill (rchar; 0: logged, not
// bounded); its processor time after the kill is logged. what names c in
// failures.
func killWhenBusy(t *testing.T, m *mount, c *exec.Cmd, what string, bound int64) {
	t.Helper()
	server := m.cmd.Process.Pid
	before, err := cpuOf(server)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if c.Stdout == nil && c.Stderr == nil {
		c.Stdout, c.Stderr = &out, &out
	}
	done := make(chan error, 1)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- c.Wait() }()
	var at time.Duration
	for at-before < 300*time.Millisecond {
		select {
		case err := <-done:
			t.Fatalf("the %s ended (%v: %s) before the server had spent 300ms on its request: give it more to do; the mount's stderr:\n%s", what, err, out.String(), m.stderr)
		case <-time.After(2 * time.Millisecond):
		}
		if at, err = cpuOf(server); err != nil {
			t.Fatal(err)
		}
	}
	readAt := readOf(server)
	if err := c.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(exitTimeout):
		t.Fatalf("the killed %s still waits %v after the kill", what, exitTimeout)
	}
	if !m.logSays("decompression stopped", exitTimeout) {
		t.Fatalf("no log line of the stopped read; the mount's stderr:\n%s", m.stderr)
	}
	after, err := cpuOf(server)
	if err != nil {
		t.Fatal(err)
	}
	read := readOf(server) - readAt
	used := after - at
	if bound > 0 && read > bound {
		t.Errorf("the server read %d bytes after the %s was killed, want at most %d", read, what, bound)
	}
	t.Logf("the server used %v of processor time and read %d bytes after the %s was killed", used, read, what)
}

// readOf returns the bytes process pid has read through system calls
// (rchar of /proc/PID/io: its source, page cache or not, and its FUSE
// requests), 0 if unknown.
func readOf(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}
