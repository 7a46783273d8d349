package pbwire

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

func TestVarint(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		b    []byte
		v    uint64
		n    int
	}{
		{"one byte", []byte{0x05, 0xff}, 5, 1},
		{"two bytes", []byte{0xac, 0x02}, 300, 2},
		{"max", protowire.AppendVarint(nil, 1<<64-1), 1<<64 - 1, 10},
		{"bits past 64 dropped", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}, 1 << 63, 10},
		{"cut", []byte{0x80, 0x80}, 0, -1},
		{"empty", nil, 0, -1},
		{"eleven bytes", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 0, -1},
	}
	for _, c := range cases {
		if v, n := Varint(c.b); v != c.v || n != c.n {
			t.Errorf("%s: Varint(%x) = %d, %d; want %d, %d", c.name, c.b, v, n, c.v, c.n)
		}
	}
}

func TestScalar(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		b    []byte
		typ  protowire.Type
		v    uint64
		ok   bool
	}{
		{"varint", protowire.AppendVarint(nil, 300), protowire.VarintType, 300, true},
		{"varint overflow", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}, protowire.VarintType, 0, false},
		{"fixed32", protowire.AppendFixed32(nil, 0xdeadbeef), protowire.Fixed32Type, 0xdeadbeef, true},
		{"fixed64", protowire.AppendFixed64(nil, 1<<60+7), protowire.Fixed64Type, 1<<60 + 7, true},
		{"fixed64 cut", []byte{1, 2, 3}, protowire.Fixed64Type, 0, false},
		{"bytes type", []byte{1, 'x'}, protowire.BytesType, 0, false},
	}
	for _, c := range cases {
		v, n := Scalar(c.b, c.typ)
		if ok := n >= 0; ok != c.ok || ok && (v != c.v || n != len(c.b)) {
			t.Errorf("%s: Scalar(%x, %v) = %d, %d; want %d, ok %v", c.name, c.b, c.typ, v, n, c.v, c.ok)
		}
	}
}

func FuzzVarint(f *testing.F) {
	f.Add([]byte{0xac, 0x02})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, n := Varint(b)
		if n < 0 {
			return
		}
		if n > len(b) || n > 10 {
			t.Fatalf("Varint(%x) length %d", b, n)
		}
		// Where protowire accepts the bytes, both agree.
		if w, m := protowire.ConsumeVarint(b); m >= 0 && (w != v || m != n) {
			t.Fatalf("Varint(%x) = %d, %d; protowire %d, %d", b, v, n, w, m)
		}
	})
}
