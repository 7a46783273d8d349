package interop

// Reference-side helpers: write files with each reference writer and read
// files with each reference reader into [][]byte. Nothing here touches recfs.

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/cockroachdb/pebble/v2/record"
	"github.com/grailbio/base/recordio"
	"github.com/grailbio/base/recordio/deprecated"
	"github.com/grailbio/base/recordio/recordioflate"
	"github.com/grailbio/base/recordio/recordioutil"
	"github.com/grailbio/base/recordio/recordiozstd"
	"github.com/syndtr/goleveldb/leveldb/journal"

	"github.com/recfs/recfs/test/internal/syncbuf"
)

func init() {
	recordiozstd.Init()
	recordioflate.Init()
}

// pebbleLogNum is the log number every pebble LogWriter file of these tests
// carries. pebble's reader takes an internal type, so it must be a constant.
const pebbleLogNum = 7

// ---- leveldb writers ----

// writeGoleveldb writes recs with goleveldb's journal.Writer.
func writeGoleveldb(recs [][]byte) ([]byte, error) {
	var buf bytes.Buffer
	w := journal.NewWriter(&buf)
	for i, r := range recs {
		jw, err := w.Next()
		if err != nil {
			return nil, fmt.Errorf("goleveldb Next %d: %w", i, err)
		}
		if _, err := jw.Write(r); err != nil {
			return nil, fmt.Errorf("goleveldb Write %d: %w", i, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// mustGoleveldb is writeGoleveldb, failing t on an error.
func mustGoleveldb(t testing.TB, recs [][]byte) []byte {
	t.Helper()
	b, err := writeGoleveldb(recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writePebbleWriter writes recs with pebble's legacy record.Writer.
func writePebbleWriter(recs [][]byte) ([]byte, error) {
	var buf bytes.Buffer
	w := record.NewWriter(&buf)
	for i, r := range recs {
		if _, err := w.WriteRecord(r); err != nil {
			return nil, fmt.Errorf("pebble WriteRecord %d: %w", i, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writePebbleLogWriter writes recs with pebble's WAL writer (recyclable
// chunks, or WAL-sync chunks when walSync) and closes it, which appends the
// EOF trailer.
func writePebbleLogWriter(recs [][]byte, walSync bool) ([]byte, error) {
	var buf syncbuf.Buffer
	w := record.NewLogWriter(&buf, pebbleLogNum, record.LogWriterConfig{
		WriteWALSyncOffsets: func() bool { return walSync },
		QueueSemChan:        make(chan struct{}, 64),
	})
	for i, r := range recs {
		if _, err := w.WriteRecord(r); err != nil {
			return nil, fmt.Errorf("pebble LogWriter WriteRecord %d: %w", i, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ---- leveldb readers ----

// readGoleveldb reads every record with goleveldb's journal.Reader (checksums
// on, not strict). drops lists the dropper reports.
func readGoleveldb(b []byte) (recs [][]byte, drops []string, err error) {
	d := dropRecorder{}
	recs, err = readAll("goleveldb", journal.NewReader(bytes.NewReader(b), &d, false, true).Next)
	return recs, d.reports, err
}

type dropRecorder struct{ reports []string }

func (d *dropRecorder) Drop(err error) { d.reports = append(d.reports, err.Error()) }

// readPebble reads every record with pebble v2's record.Reader, expecting
// pebbleLogNum in recyclable chunks (legacy chunks carry none).
func readPebble(b []byte) ([][]byte, error) {
	return readAll("pebble", record.NewReader(bytes.NewReader(b), pebbleLogNum).Next)
}

// readAll reads every record a reference reader's next yields (see
// eachRecord), each to its end. An error reading a record's bytes ends it,
// wrapped, naming the reader (which) and the record's number.
func readAll(which string, next func() (io.Reader, error)) ([][]byte, error) {
	var recs [][]byte
	err := eachRecord(next, func(r io.Reader) error {
		p, err := io.ReadAll(r)
		if err != nil {
			return fmt.Errorf("%s record %d: %w", which, len(recs), err)
		}
		recs = append(recs, p)
		return nil
	})
	return recs, err
}

// eachRecord calls f with each record a reference reader's next yields
// (goleveldb's journal.Reader, pebble's record.Reader) until next returns
// io.EOF, the end (nil), or another error, which it returns as it is; an
// error of f ends it too, as it is.
func eachRecord(next func() (io.Reader, error), f func(io.Reader) error) error {
	for {
		r, err := next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := f(r); err != nil {
			return err
		}
	}
}

// ---- grailbio recordio ----

// rioSpec describes a recordio file for the grailbio writer.
type rioSpec struct {
	Header       []recordio.KeyValue // user header entries, in order
	Transformers []string
	MaxItems     uint32 // 0 = reference default
	FlushAfter   map[int]bool
	Trailer      []byte // nil = no trailer
}

// writeGrail writes items with grailbio's recordio.NewWriter.
func writeGrail(items [][]byte, s rioSpec) ([]byte, error) {
	var buf bytes.Buffer
	w := recordio.NewWriter(&buf, recordio.WriterOpts{
		Transformers: s.Transformers,
		MaxItems:     s.MaxItems,
		KeyTrailer:   s.Trailer != nil,
	})
	for _, kv := range s.Header {
		w.AddHeader(kv.Key, kv.Value)
	}
	for i, it := range items {
		w.Append(it)
		if s.FlushAfter[i] {
			w.Flush()
		}
	}
	if s.Trailer != nil {
		w.SetTrailer(s.Trailer)
	}
	if err := w.Finish(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeGrailLegacyUnpacked writes one legacy unpacked record per item.
func writeGrailLegacyUnpacked(items [][]byte) ([]byte, error) {
	var buf bytes.Buffer
	w := deprecated.NewLegacyWriter(&buf, deprecated.LegacyWriterOpts{})
	for i, it := range items {
		if _, err := w.Write(it); err != nil {
			return nil, fmt.Errorf("legacy write %d: %w", i, err)
		}
	}
	return buf.Bytes(), nil
}

// writeGrailLegacyPacked writes items with the legacy packed writer, at most
// maxItems per record, flate-compressed per record when flate is set.
func writeGrailLegacyPacked(items [][]byte, maxItems uint32, flate bool) ([]byte, error) {
	var buf bytes.Buffer
	o := deprecated.LegacyPackedWriterOpts{MaxItems: maxItems}
	if flate {
		o.Transform = recordioutil.NewFlateTransform(-1).CompressTransform
	}
	w := deprecated.NewLegacyPackedWriter(&buf, o)
	for i, it := range items {
		if _, err := w.Write(it); err != nil {
			return nil, fmt.Errorf("legacy packed write %d: %w", i, err)
		}
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// grailRead is what the reference scanner returned for a file.
type grailRead struct {
	Version  recordio.FormatVersion
	Header   recordio.ParsedHeader
	Items    [][]byte
	Trailer  []byte
	Err      error // from Finish
	TrailErr error // Err() right after Trailer(), if Trailer() returned nil
}

// readGrail scans the whole file with grailbio's recordio.NewScanner. For a
// legacy flate-packed file pass legacyFlate.
func readGrail(r io.ReadSeeker, legacyFlate bool) grailRead {
	o := recordio.ScannerOpts{}
	if legacyFlate {
		o.LegacyTransform = recordioflate.FlateUncompress
	}
	sc := recordio.NewScanner(r, o)
	var out grailRead
	out.Version = sc.Version()
	out.Header = sc.Header()
	out.Trailer = sc.Trailer()
	if out.Trailer == nil {
		out.TrailErr = sc.Err()
	}
	for sc.Scan() {
		it := sc.Get().([]byte)
		out.Items = append(out.Items, bytes.Clone(it))
	}
	out.Err = sc.Finish()
	return out
}

// readGrailBytes is readGrail over an in-memory file.
func readGrailBytes(b []byte, legacyFlate bool) grailRead {
	return readGrail(bytes.NewReader(b), legacyFlate)
}

// ---- comparisons ----

// diffRecords describes the first difference between want and got, or "".
func diffRecords(want, got [][]byte) string {
	for i := 0; i < len(want) && i < len(got); i++ {
		if !bytes.Equal(want[i], got[i]) {
			return fmt.Sprintf("record %d differs: want %d bytes %s, got %d bytes %s",
				i, len(want[i]), headHex(want[i]), len(got[i]), headHex(got[i]))
		}
	}
	if len(want) != len(got) {
		return fmt.Sprintf("want %d records, got %d", len(want), len(got))
	}
	return ""
}

func headHex(b []byte) string {
	if len(b) > 8 {
		return fmt.Sprintf("%x…", b[:8])
	}
	return fmt.Sprintf("%x", b)
}
