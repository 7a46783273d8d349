package interop

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/recfs/recfs/codec/tfrecord"
	"github.com/recfs/recfs/test/internal/tfrnode"
)

// tfrBenchFile writes (once per run) a TFRecord file of about total bytes
// of 1 KiB records.
func tfrBenchFile(b *testing.B, total int64) benchFile {
	const recSize = 1 << 10
	return getBenchFile(b, fmt.Sprintf("tfrecord-%d-%d.tfrecord", recSize, total), func(w io.Writer) (int, error) {
		tw := tfrecord.NewWriter(w, tfrecord.WriterOptions{})
		buf := make([]byte, recSize)
		n := 0
		for ; tw.Offset() < total; n++ {
			if _, err := tw.WriteRecord(benchRecord(buf, n, recSize)); err != nil {
				return n, err
			}
		}
		return n, tw.Close()
	})
}

// mappedFile is a read-only memory map of a file, as a ByteSlicer.
type mappedFile struct{ b []byte }

func mapFile(b *testing.B, path string) *mappedFile {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	m, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		b.Fatal(err)
	}
	return &mappedFile{m}
}

func (m *mappedFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(m.b)) {
		return 0, io.EOF
	}
	n := copy(p, m.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (m *mappedFile) Slice(off, n int64) ([]byte, error) {
	if off+n > int64(len(m.b)) {
		return nil, io.EOF
	}
	return m.b[off : off+n], nil
}

// BenchmarkTFRecordScan scans a TFRecord file of 1 KiB records
// (RECFS_BENCH_BYTES, default 64 MiB; the figure is 1 GiB): recfs's
// Scanner (both checksums of every record, no payload copy) over pread and
// over a memory map; the independent reader, @roboflow/tfrecords (its
// TFRecordsReader loop with the package's own crc32c/maskCrc/readInt64,
// without the protobuf decoding that needs Example records), as one node
// process per iteration, on a file of at most 8 MiB; and `cat FILE >/dev/null` and a Go read loop as
// the limit. Page cache warm.
func BenchmarkTFRecordScan(b *testing.B) {
	bf := tfrBenchFile(b, benchBytes(b))
	scan := func(b *testing.B, r io.ReaderAt) {
		s := tfrecord.NewScanner(r, bf.size, tfrecord.Options{})
		n := 0
		for s.Next() {
			n++
		}
		if s.Err() != nil || len(s.Damage()) > 0 {
			b.Fatal(s.Err(), s.Damage())
		}
		wantCount(b, "recfs", n, bf.count)
	}
	b.Run("recfs-pread", func(b *testing.B) {
		b.SetBytes(bf.size)
		for b.Loop() {
			f := openBench(b, bf)
			scan(b, f)
			f.Close()
		}
	})
	b.Run("recfs-mmap", func(b *testing.B) {
		b.SetBytes(bf.size)
		for b.Loop() {
			m := mapFile(b, bf.path)
			scan(b, m)
			syscall.Munmap(m.b)
		}
	})
	b.Run("roboflow-node", func(b *testing.B) {
		dir := tfrnode.Need(b)
		// About 1 MB/s: its crc32c rebuilds its table on every call. A
		// smaller file keeps the row to seconds; the rate is per byte.
		bf := tfrBenchFile(b, min(bf.size, 8<<20))
		b.SetBytes(bf.size)
		for b.Loop() {
			out, err := exec.Command("node", "--max-old-space-size=4096", filepath.Join(dir, "tfr.js"), "scan", bf.path).Output()
			if err != nil {
				b.Fatal(err)
			}
			var res struct{ Count int }
			if err := json.Unmarshal(out, &res); err != nil {
				b.Fatal(err)
			}
			wantCount(b, "@roboflow/tfrecords", res.Count, bf.count)
		}
	})
	b.Run("cat", func(b *testing.B) {
		null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer null.Close()
		b.SetBytes(bf.size)
		for b.Loop() {
			cmd := exec.Command("cat", bf.path)
			cmd.Stdout = null
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read", func(b *testing.B) { plainRead(b, bf) })
}
