//go:build unix

package main

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// pageSize is the size of the pages /proc/PID/pagemap describes.
var pageSize = int64(os.Getpagesize())

// exeResident returns how many bytes of process pid's own executable file
// are resident in its address space, by ELF section (".text",
// ".gopclntab", ".rodata" …). These pages come from the page cache, 64 KB
// around each page the process touched, so they count in its RSS though
// no allocation made them; for a Go program they are set by what the
// package inits and the runtime read before main runs. It needs Linux's
// /proc/PID/pagemap, whose present bit any user may read.
func exeResident(pid int) (map[string]int64, error) {
	proc := "/proc/" + strconv.Itoa(pid)
	exe, err := os.Readlink(proc + "/exe")
	if err != nil {
		return nil, err
	}
	ef, err := elf.Open(exe)
	if err != nil {
		return nil, err
	}
	defer ef.Close()
	maps, err := os.Open(proc + "/maps")
	if err != nil {
		return nil, err
	}
	defer maps.Close()
	pagemap, err := os.Open(proc + "/pagemap")
	if err != nil {
		return nil, err
	}
	defer pagemap.Close()
	return residentBySection(exe, func(off int64) string { return sectionAt(ef, off) }, maps, pagemap)
}

// residentBySection reads a process's maps and pagemap and sums, by the
// section that section names for each file offset, the present pages of
// the mappings of the file exe that are the file's own pages.
func residentBySection(exe string, section func(off int64) string, maps io.Reader, pagemap io.ReaderAt) (map[string]int64, error) {
	res := map[string]int64{}
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		// start-end perms offset dev inode path
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[5] != exe {
			continue
		}
		lo, hi, ok := parseRange(f[0])
		off, err := strconv.ParseInt(f[2], 16, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("maps: cannot read %q", sc.Text())
		}
		entries := make([]byte, (hi-lo)/pageSize*8)
		if _, err := pagemap.ReadAt(entries, lo/pageSize*8); err != nil {
			return nil, err
		}
		for i := int64(0); i < int64(len(entries))/8; i++ {
			// Bit 63: present; bit 61: a page of the file, not a private
			// copy (a written page of .data is anonymous memory, which
			// RssAnon counts).
			if e := binary.LittleEndian.Uint64(entries[i*8:]); e&(1<<63|1<<61) != 1<<63|1<<61 {
				continue
			}
			res[section(off+i*pageSize)] += pageSize
		}
	}
	return res, sc.Err()
}

// parseRange parses /proc/PID/maps's "start-end" in hexadecimal.
func parseRange(s string) (lo, hi int64, ok bool) {
	a, b, found := strings.Cut(s, "-")
	lo, err1 := strconv.ParseInt(a, 16, 64)
	hi, err2 := strconv.ParseInt(b, 16, 64)
	return lo, hi, found && err1 == nil && err2 == nil && hi >= lo
}

// sectionAt names the section of ef that holds the file offset off, or
// "other" (the ELF headers, padding between sections).
func sectionAt(ef *elf.File, off int64) string {
	for _, s := range ef.Sections {
		if s.Type != elf.SHT_NOBITS && s.Addr != 0 && int64(s.Offset) <= off && off < int64(s.Offset+s.Size) {
			return s.Name
		}
	}
	return "other"
}

// sectionsText lists the largest sections of res, in MB, largest first:
// ".text 13.3, .gopclntab 7.4, …".
func sectionsText(res map[string]int64) string {
	names := make([]string, 0, len(res))
	for n := range res {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return res[names[i]] > res[names[j]] })
	var parts []string
	for _, n := range names {
		if res[n] >= mb/10 {
			parts = append(parts, fmt.Sprintf("%s %.1f", n, float64(res[n])/mb))
		}
	}
	return strings.Join(parts, ", ")
}

// total is the sum of res's sections.
func total(res map[string]int64) int64 {
	var n int64
	for _, v := range res {
		n += v
	}
	return n
}
