//go:build unix

package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestExeResidentCountsTheTestBinarysPages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc/PID/pagemap")
	}
	res, err := exeResident(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	// The code running now is resident, and no section can hold more
	// pages than it spans (plus one at each end, shared with a neighbour).
	if res[".text"] == 0 || res[".gopclntab"] == 0 {
		t.Errorf("resident: %s; want .text and .gopclntab (running code and its tables)", sectionsText(res))
	}
	for name, n := range res {
		s := ef.Section(name)
		if s == nil {
			if name != "other" {
				t.Errorf("section %q is not in %s", name, exe)
			}
			continue
		}
		if limit := int64(s.Size) + 2*pageSize; n > limit {
			t.Errorf("%s: %d bytes resident, more than the %d it spans", name, n, s.Size)
		}
	}
	if fi, err := os.Stat(exe); err == nil && total(res) > fi.Size() {
		t.Errorf("%d bytes resident, more than the file's %d", total(res), fi.Size())
	}
}

func TestResidentBySectionCountsPresentPagesOfTheFile(t *testing.T) {
	base := 0x400000 / pageSize
	// Two mappings of the file (4 and 2 pages, the second from file page 6)
	// and one of another file; pages 0, 2 and 3 of the first and page 1 of
	// the second are present, as is every page of the other file; page 0
	// of the second is present as a private copy, anonymous memory.
	mapsText := fmt.Sprintf("%x-%x r-xp 00000000 08:01 7 /bin/gen\n%x-%x r--p %x 08:01 7 /bin/gen\n%x-%x r--p 00000000 08:01 9 /lib/other\n",
		base*pageSize, (base+4)*pageSize, (base+10)*pageSize, (base+12)*pageSize, 6*pageSize,
		(base+20)*pageSize, (base+22)*pageSize)
	pagemap := make([]byte, (base+22)*8)
	for _, page := range []int64{base, base + 2, base + 3, base + 11, base + 20, base + 21} {
		binary.LittleEndian.PutUint64(pagemap[page*8:], 1<<63|1<<61|12345) // present, of the file
	}
	binary.LittleEndian.PutUint64(pagemap[(base+1)*8:], 1<<62|1<<61)  // swapped out, not present
	binary.LittleEndian.PutUint64(pagemap[(base+10)*8:], 1<<63|12346) // present, a private copy
	section := func(off int64) string {
		if off < 3*pageSize {
			return ".text"
		}
		return ".rodata"
	}
	res, err := residentBySection("/bin/gen", section, strings.NewReader(mapsText), bytes.NewReader(pagemap))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{".text": 2 * pageSize, ".rodata": 2 * pageSize}; !maps.Equal(res, want) {
		t.Errorf("resident = %v, want %v", res, want)
	}
}
