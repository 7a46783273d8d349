package dbdecode

import (
	"fmt"
	"testing"
)

// benchBatch is a batch of n puts of 16-byte keys and 100-byte values.
func benchBatch(n int) []byte {
	b := hdr(1, uint32(n))
	val := make([]byte, 100)
	for i := range val {
		val[i] = 'a' + byte(i%26)
	}
	for i := 0; i < n; i++ {
		b = append(b, rec(byte(1), fmt.Sprintf("user%012d", i), string(val))...)
	}
	return b
}

func BenchmarkBatch(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := benchBatch(n)
			var dst []byte
			b.SetBytes(int64(len(r)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				dst, _ = AppendBatch(dst[:0], r, Options{})
			}
		})
	}
}

func BenchmarkVersionEdit(b *testing.B) {
	var r []byte
	for i := 0; i < 100; i++ {
		r = append(r, rec(103, 1, 100+i, 4<<20, ikey(fmt.Sprintf("user%012d", i), 1, 1), ikey(fmt.Sprintf("user%012d", i+1), 9, 1), 1, 9, 6, string(rec(1700000000)), 1)...)
	}
	var dst []byte
	b.SetBytes(int64(len(r)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		dst, _ = AppendVersionEdit(dst[:0], r)
	}
}
