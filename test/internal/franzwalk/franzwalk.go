// Package franzwalk walks a Kafka log segment as franz-go's consumer does,
// for the benchmarks that set recfs's Kafka scan beside the reference
// client (test/interop and recfs-bench).
package franzwalk

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Walk walks the v2 record batches of seg as franz-go's consumer does:
// every batch parsed by kmsg, its CRC checked, its records decompressed by
// kgo's default decompressor and parsed, without copying. Each record goes
// to fn (nil: dropped); fn must not keep them, their bytes are seg's and
// the structs are reused. Walk returns how many records it parsed, and the
// first error (the count then says how many came before it).
func Walk(seg []byte, fn func(rb *kmsg.RecordBatch, r *kmsg.Record)) (int, error) {
	dec := kgo.DefaultDecompressor()
	k := 0
	var rb kmsg.RecordBatch
	var r kmsg.Record
	for len(seg) > 0 {
		size := 12 + int(binary.BigEndian.Uint32(seg[8:]))
		raw := seg[:size]
		seg = seg[size:]
		if err := rb.UnsafeReadFrom(raw); err != nil {
			return k, err
		}
		if uint32(rb.CRC) != crc32.Checksum(raw[21:], castagnoli) {
			return k, fmt.Errorf("franz-go: CRC mismatch at offset %d", rb.FirstOffset)
		}
		recs, err := dec.Decompress(rb.Records, kgo.CompressionCodecType(rb.Attributes&7))
		if err != nil {
			return k, err
		}
		for range rb.NumRecords {
			l, m := binary.Varint(recs)
			if err := r.UnsafeReadFrom(recs[:m+int(l)]); err != nil {
				return k, err
			}
			recs = recs[m+int(l):]
			if fn != nil {
				fn(&rb, &r)
			}
			k++
		}
	}
	return k, nil
}
