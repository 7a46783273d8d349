package report

import (
	"bytes"
	"testing"
)

func TestEntryWriter(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	ents := []Entry{
		{Name: "a.log", Size: 1234, Format: "leveldb"},
		{Name: "sub", Dir: true, Format: "dir"},
		{Name: "b.rio", Size: 7, Format: "recordio", Published: &yes},
		{Name: "c", Size: 0, Format: "other", Published: &no},
		{Name: "p", Dir: true, Format: "dir", Published: &yes},
	}
	for _, tc := range []struct {
		name   string
		asJSON bool
		want   string
	}{
		{"text", false, "" +
			"leveldb                 1234  a.log\n" +
			"dir                        -  sub/\n" +
			"recordio                   7  published  b.rio\n" +
			"other                      0  -          c\n" +
			"dir                        -  -          p/\n"},
		{"json", true, "" +
			`{"name":"a.log","dir":false,"size":1234,"format":"leveldb"}` + "\n" +
			`{"name":"sub","dir":true,"size":0,"format":"dir"}` + "\n" +
			`{"name":"b.rio","dir":false,"size":7,"format":"recordio","published_index":true}` + "\n" +
			`{"name":"c","dir":false,"size":0,"format":"other","published_index":false}` + "\n" +
			`{"name":"p","dir":true,"size":0,"format":"dir","published_index":true}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			w := NewEntryWriter(&b, tc.asJSON)
			for _, e := range ents {
				if err := w.Write(e); err != nil {
					t.Fatal(err)
				}
			}
			if b.Len() != 0 {
				t.Errorf("wrote %d bytes before Flush", b.Len())
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
