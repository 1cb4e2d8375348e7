package lib

import (
	"bytes"
	"sync"
)

// BufferPool lends out byte buffers, so that an extension reading many
// messages does not allocate one per message.
type BufferPool struct {
	pool *sync.Pool
}

// NewBufferPool returns a pool that makes an empty buffer when it has none.
func NewBufferPool() *BufferPool {
	return &BufferPool{pool: &sync.Pool{New: func() any { return new(bytes.Buffer) }}}
}

// Get returns an empty buffer.
func (bp BufferPool) Get() *bytes.Buffer { return bp.pool.Get().(*bytes.Buffer) }

// Put empties b and takes it back.
func (bp BufferPool) Put(b *bytes.Buffer) {
	b.Reset()
	bp.pool.Put(b)
}
