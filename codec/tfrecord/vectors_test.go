package tfrecord

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// scanAll scans r fully and returns the data of every record.
func scanAll(t testing.TB, r io.ReaderAt, size int64, o Options) ([]string, []Record, []codec.Damage, error) {
	t.Helper()
	got, recs, dmg, err := codectest.ScanAll(t, NewScanner(r, size, o), func(rec *Record) ([]byte, error) {
		b := make([]byte, rec.Len)
		_, err := ReadRecord(r, *rec, b, 0)
		return b, err
	})
	var data []string
	for _, b := range got {
		data = append(data, string(b))
	}
	return data, recs, dmg, err
}

func TestVectors(t *testing.T) {
	t.Parallel()
	type dmg struct {
		Off, Len int64
		Reason   string
		Err      error
	}
	tests := []struct {
		file    string
		detect  Compression
		notTF   bool
		records []string
		damage  []dmg
	}{
		{file: "empty.tfrecord", notTF: true},
		{file: "zero_length.tfrecord", records: []string{"", "abc"}},
		{file: "only_zero_length.tfrecord", records: []string{""}},
		{file: "bad_length_crc.tfrecord", records: []string{"one", "three"},
			damage: []dmg{{19, 19, ReasonLengthCRC, codec.ErrCorrupt}}},
		{file: "bad_length.tfrecord", records: []string{"one", "three"},
			damage: []dmg{{19, 19, ReasonLengthCRC, codec.ErrCorrupt}}},
		{file: "bad_data_crc.tfrecord", records: []string{"one", "three"},
			damage: []dmg{{19, 19, ReasonDataCRC, codec.ErrCorrupt}}},
		{file: "bad_data.tfrecord", records: []string{"one", "three"},
			damage: []dmg{{19, 22, ReasonDataCRC, codec.ErrCorrupt}}},
		{file: "truncated_tail.tfrecord", records: []string{"one", "two"},
			damage: []dmg{{38, 14, ReasonTruncated, codec.ErrTruncated}}},
		{file: "truncated_header.tfrecord", records: []string{"one"},
			damage: []dmg{{19, 5, ReasonTruncated, codec.ErrTruncated}}},
		{file: "truncated_crc.tfrecord", records: []string{"one"},
			damage: []dmg{{19, 18, ReasonTruncated, codec.ErrTruncated}}},
		{file: "garbage_between.tfrecord", records: []string{"one", "two"},
			damage: []dmg{{19, 102, ReasonLengthCRC, codec.ErrCorrupt}}},
		{file: "garbage_head.tfrecord", notTF: true, records: []string{"one", "two"},
			damage: []dmg{{0, 102, ReasonLengthCRC, codec.ErrCorrupt}}},
		{file: "plain.tfrecord.gz", detect: Gzip, records: []string{"one", "", "three"}},
		{file: "plain.tfrecord.zz", detect: Zlib, records: []string{"one", "", "three"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			var r io.ReaderAt = bytes.NewReader(b)
			size := int64(len(b))
			c, err := Detect(r, size)
			switch {
			case tt.notTF && !errors.Is(err, codec.ErrFormat):
				t.Fatalf("Detect = %v, %v; want codec.ErrFormat", c, err)
			case !tt.notTF && (err != nil || c != tt.detect):
				t.Fatalf("Detect = %v, %v; want %v", c, err, tt.detect)
			}
			if c != None {
				res, err := IndexCompressed(context.Background(), r, size, c, IndexOptions{}, func(Record) bool { return true })
				if err != nil {
					t.Fatal(err)
				}
				z, err := NewInflated(r, size, res.Index, InflatedOptions{})
				if err != nil {
					t.Fatal(err)
				}
				r, size = z, z.Size()
			}
			data, _, damage, err := scanAll(t, r, size, Options{})
			if err != nil {
				t.Fatalf("scan: %v", err)
			}
			if !reflect.DeepEqual(data, tt.records) && len(data)+len(tt.records) > 0 {
				t.Errorf("records = %q, want %q", data, tt.records)
			}
			var got []dmg
			for _, d := range damage {
				got = append(got, dmg{d.Off, d.Len, d.Reason, d.Err})
				if d.Kind == codec.DamageOther {
					t.Errorf("damage %v is not classified", d)
				}
			}
			if !reflect.DeepEqual(got, tt.damage) {
				t.Errorf("damage = %+v, want %+v", got, tt.damage)
			}
			// Strict: the first damage is the error, at its offset.
			_, _, _, err = scanAll(t, r, size, Options{Strict: true})
			var ce *codec.CorruptError
			switch {
			case len(tt.damage) == 0 && err != nil:
				t.Errorf("strict scan: %v", err)
			case len(tt.damage) > 0 && (!errors.As(err, &ce) || ce.Off != tt.damage[0].Off || !errors.Is(err, tt.damage[0].Err)):
				t.Errorf("strict scan error = %v, want a CorruptError at %d matching %v", err, tt.damage[0].Off, tt.damage[0].Err)
			}
		})
	}
}

func TestCRCMasking(t *testing.T) {
	t.Parallel()
	// CRC-32C check value of "123456789" (RFC 3720 B.4).
	if got := crc32c([]byte("123456789")); got != 0xe3069283 {
		t.Fatalf("crc32c = %#x", got)
	}
	for _, c := range []uint32{0, 1, 0xe3069283, 0xffffffff} {
		if maskCRC(c) == c && c != 0 || codec.UnmaskCRC(maskCRC(c)) != c {
			t.Errorf("mask(%#x) = %#x, unmask back %#x", c, maskCRC(c), codec.UnmaskCRC(maskCRC(c)))
		}
	}
	// leveldb's masking of 0 is its delta.
	if maskCRC(0) != 0xa282ead8 {
		t.Errorf("maskCRC(0) = %#x", maskCRC(0))
	}
}
