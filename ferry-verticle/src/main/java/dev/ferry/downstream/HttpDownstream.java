package dev.ferry.downstream;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.core.buffer.Buffer;
import java.util.Objects;

/**
 * One {@code POST url} per batch through a pooled, keep-alive Vert.x Web Client. Any 2xx answer is
 * validated as outcomes; any other status fails the batch.
 *
 * <p>The timeout is the Web Client's request timeout: a request that receives nothing for that long
 * is reset, so its Future completes and the key is freed.
 */
public final class HttpDownstream implements Downstream {
  private final String url;
  private final long timeoutMs;
  private final WebClient client;

  /**
   * @param poolSize most connections to the downstream; batches beyond it wait for a connection
   */
  public HttpDownstream(Vertx vertx, String url, long timeoutMs, int poolSize) {
    Objects.requireNonNull(vertx, "vertx");
    this.url = Objects.requireNonNull(url, "url");
    if (timeoutMs < 1 || poolSize < 1) {
      throw new IllegalArgumentException("timeoutMs and poolSize must be >= 1, got " + timeoutMs + ", " + poolSize);
    }
    this.timeoutMs = timeoutMs;
    WebClientOptions options = new WebClientOptions().setKeepAlive(true);
    this.client = WebClient.create(vertx, options, new PoolOptions().setHttp1MaxSize(poolSize));
  }

  @Override
  public Future<JsonArray> call(JsonObject request) {
    int expected = request.getJsonArray("inputs").size();
    HttpRequest<Buffer> post = client.postAbs(url)
        .timeout(timeoutMs)
        .putHeader("Content-Type", "application/json");
    return post.sendBuffer(request.toBuffer()).map(response -> {
      int status = response.statusCode();
      if (status < 200 || status > 299) {
        // Status only: a body may quote payloads back.
        throw new DownstreamException("the downstream answered HTTP " + status);
      }
      return Outcomes.validate(response.body(), expected);
    });
  }

  @Override
  public Future<Void> close() {
    client.close();
    return Future.succeededFuture();
  }

  @Override
  public String toString() {
    return "http:" + url;
  }
}
