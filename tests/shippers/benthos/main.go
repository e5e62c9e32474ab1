// The Benthos binary the shipper tests drive: the stream engine with the components they use
// (generate, batching with archive, http_client), nothing more, so the build stays small.
package main

import (
	"context"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"
)

func main() {
	service.RunCLI(context.Background())
}
