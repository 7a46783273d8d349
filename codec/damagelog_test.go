package codec

import (
	"errors"
	"reflect"
	"testing"
)

// TestDamageLog: ranges are kept in the order added; with Join, one that
// starts where the previous ends, of the same kind and error, extends it;
// under Strict each range comes back as the CorruptError naming the
// format and the offset.
func TestDamageLog(t *testing.T) {
	t.Parallel()
	a := Damage{Off: 10, Len: 5, Kind: DamageChecksum, Reason: "bad checksum", Err: ErrCorrupt}
	touching := Damage{Off: 15, Len: 3, Kind: DamageChecksum, Reason: "bad checksum", Err: ErrCorrupt}
	other := Damage{Off: 18, Len: 2, Kind: DamageTruncChunk, Reason: "torn", Err: ErrTruncated}
	apart := Damage{Off: 40, Len: 1, Kind: DamageChecksum, Reason: "bad checksum", Err: ErrCorrupt}
	joined := a
	joined.Len = 8
	for _, c := range []struct {
		name string
		join bool
		want []Damage
	}{
		{"listed", false, []Damage{a, touching, other, apart}},
		{"joined", true, []Damage{joined, other, apart}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := DamageLog{Format: TFRecord, Join: c.join}
			if l.Last() != nil {
				t.Fatal("Last of an empty log is not nil")
			}
			for _, d := range []Damage{a, touching, other, apart} {
				if err := l.Add(d); err != nil {
					t.Fatalf("Add(%+v) = %v without Strict", d, err)
				}
			}
			if got := l.Ranges(); !reflect.DeepEqual(got, c.want) {
				t.Errorf("Ranges() = %+v, want %+v", got, c.want)
			}
			l.Last().Reason = "changed"
			if got := l.Ranges()[len(l.Ranges())-1].Reason; got != "changed" {
				t.Errorf("Last() is not the log's own last range: reason %q", got)
			}
		})
	}
	t.Run("strict", func(t *testing.T) {
		t.Parallel()
		l := DamageLog{Format: TFRecord, Strict: true, Join: true}
		err := l.Add(a)
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Off != a.Off || !errors.Is(err, ErrCorrupt) {
			t.Fatalf("strict Add = %v, want a CorruptError at %d wrapping ErrCorrupt", err, a.Off)
		}
		if len(l.Ranges()) != 1 {
			t.Errorf("strict Add did not record the range: %+v", l.Ranges())
		}
	})
}
