// Package docs holds no code: it is metronome's manual and design notes,
// in Markdown. Its tests keep them true to the tree: the layout table
// lists every folder that exists, and every link between the pages leads
// to a page and heading that exist.
package docs
