package main

import "testing"

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"65536", 65536, true}, {"256M", 256 << 20, true}, {"256MiB", 256 << 20, true},
		{"1g", 1 << 30, true}, {"64K", 64 << 10, true}, {"0", 0, true}, {"12B", 12, true},
		{"", 0, false}, {"-1M", 0, false}, {"1T", 0, false}, {"M", 0, false}, {"9999999999G", 0, false},
	} {
		got, err := parseSize(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}
