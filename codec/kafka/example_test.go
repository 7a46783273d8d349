package kafka_test

import (
	"bytes"
	"fmt"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/kafka"
)

// Scan a segment, then read each record's key and value back through its
// batch's data.
func ExampleScanner() {
	seg := codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 41, BaseTimestamp: 1700000000000,
		Records: []codectest.KafkaRecord{
			{Key: []byte("user-1"), Value: []byte("logged in")},
			{Key: []byte("user-2"), Value: []byte("logged out"), TimestampDelta: 250,
				Headers: []codectest.KafkaHeader{{Key: "trace", Value: []byte("abc")}}},
		}})
	r := bytes.NewReader(seg)
	s := kafka.NewScanner(r, int64(len(seg)), kafka.Options{})
	for s.Next() {
		b, rec := s.Batch(), s.Record()
		data, err := kafka.ReadBatch(r, b.Off, b.Len, nil, kafka.DefaultMaxDecoded)
		if err != nil {
			panic(err)
		}
		key := data[rec.KeyOff : rec.KeyOff+rec.KeyLen]
		value := data[rec.ValueOff : rec.ValueOff+rec.ValueLen]
		fmt.Printf("offset %d at %d: %s = %s (%d headers)\n", rec.Offset, rec.Timestamp, key, value, rec.Headers)
	}
	fmt.Println(s.Err(), len(s.Damage()))
	// Output:
	// offset 41 at 1700000000000: user-1 = logged in (0 headers)
	// offset 42 at 1700000000250: user-2 = logged out (1 headers)
	// <nil> 0
}

// Decompress a batch's records by codec, within a limit.
func ExampleDecompress() {
	_, err := kafka.Decompress(nil, kafka.Snappy, []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0}, 1<<20)
	fmt.Println(err)
	// Output:
	// codec: size limit exceeded: kafka: decompressed batch exceeds the limit
}
