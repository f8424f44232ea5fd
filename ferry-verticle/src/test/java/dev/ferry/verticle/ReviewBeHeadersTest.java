package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.MultiMap;
import org.junit.jupiter.api.Test;

/**
 * Review BE: the number headers as a hostile caller writes them (ADR 0186). The 400 for a bad
 * {@code timeout-ms} or {@code order} said "not a whole number" and no more: not the value given,
 * not the range the header takes, and it said so of 9223372036854775808, which is a whole number.
 * Blanks around a number, a plus sign and other scripts' digits were read as the number, though no
 * client writes them so and another reader of the same header may not. A header Ferry reads, given
 * twice with different values, was read as its first value, silently.
 */
class ReviewBeHeadersTest {
  private static final String TIMEOUT_RULE = ": must be a whole number of ms in ASCII digits, >= 1 and <= 9223372036854";
  private static final String ORDER_RULE =
      ": must be a whole number in ASCII digits, >= -9223372036854775808 and <= 9223372036854775807";

  private static String refusal(MultiMap headers) {
    return assertThrows(Submission.BadInput.class, () -> Submission.parseFromClient(headers, 1)).getMessage();
  }

  private static MultiMap with(String name, String value) {
    return MultiMap.caseInsensitiveMultiMap().add("key", "k").add(name, value);
  }

  @Test
  void aBadTimeoutNamesTheHeaderTheValueGivenAndTheRange() {
    for (String bad : new String[] {"soon", "", "0", "-5", "9223372036855", "9223372036854775808",
        "-9223372036854775809", "1e3", "0x10", "1.5", " 5", "5 ", "+5", "\u0665", "\uff15", "5ms", "-", "--5"}) {
      assertEquals("the \"timeout-ms\" header is \"" + bad + "\"" + TIMEOUT_RULE, refusal(with("timeout-ms", bad)), bad);
    }
  }

  @Test
  void aBadOrderNamesTheHeaderTheValueGivenAndTheRange() {
    for (String bad : new String[] {"first", "", "9223372036854775808", "-9223372036854775809", "1e3", "0x10",
        " 5", "5 ", "+5", "\u0665", "7.0", "-"}) {
      assertEquals("the \"order\" header is \"" + bad + "\"" + ORDER_RULE, refusal(with("order", bad)), bad);
    }
  }

  /**
   * Blanks, a plus sign and other scripts' digits were read as the number (the value was trimmed
   * and given to Long.parseLong, which takes any Unicode digit): each is now refused, in either header.
   */
  @Test
  void blanksAPlusSignAndOtherScriptsDigitsAreNoLongerReadAsANumber() {
    for (String header : new String[] {"timeout-ms", "order"}) {
      for (String bad : new String[] {" 5", "5 ", "\t5", "+5", "\u0665", "\uff15", "\u096b"}) {
        assertThrows(Submission.BadInput.class, () -> Submission.parseFromClient(with(header, bad), 1), header + " " + bad);
      }
    }
  }

  @Test
  void theNumbersAHeaderTakesAreReadAsWritten() throws Exception {
    assertEquals(1, Submission.parseFromClient(with("timeout-ms", "1"), 1).timeoutMs);
    assertEquals(9223372036854L, Submission.parseFromClient(with("timeout-ms", "9223372036854"), 1).timeoutMs);
    assertEquals(250, Submission.parseFromClient(with("timeout-ms", "0250"), 1).timeoutMs, "leading zeros are digits");
    assertEquals(Long.MIN_VALUE, Submission.parseFromClient(with("order", "-9223372036854775808"), 1).order);
    assertEquals(Long.MAX_VALUE, Submission.parseFromClient(with("order", "9223372036854775807"), 1).order);
    assertEquals(0, Submission.parseFromClient(with("order", "-0"), 1).order);
  }

  /** A value is quoted escaped and cut short: no 400 carries a line break, nor a megabyte of header back. */
  @Test
  void aValueIsQuotedEscapedAndCutShort() {
    String message = refusal(with("order", "1\n2"));
    assertEquals("the \"order\" header is \"1\\n2\"" + ORDER_RULE, message);
    String huge = "9".repeat(1 << 20);
    message = refusal(with("timeout-ms", huge));
    assertEquals("the \"timeout-ms\" header is \"" + "9".repeat(64) + "...\"" + TIMEOUT_RULE, message);
  }

  @Test
  void aHeaderFerryReadsGivenTwiceWithDifferentValuesIsRefused() throws Exception {
    for (String name : new String[] {"key", "id", "timeout-ms", "order", "ferry-origin"}) {
      MultiMap headers = MultiMap.caseInsensitiveMultiMap().add("key", "k").add(name, "1").add(name.toUpperCase(), "2");
      if (name.equals("key")) {
        headers = MultiMap.caseInsensitiveMultiMap().add("key", "1").add("KEY", "2");
      }
      assertEquals("the \"" + name + "\" header is given more than once, with different values (\"1\" and \"2\"): give it once",
          refusal(headers), name);
    }
    // The same value twice says one thing: taken.
    Submission same = Submission.parseFromClient(MultiMap.caseInsensitiveMultiMap().add("key", "k").add("key", "k")
        .add("order", "3").add("Order", "3"), 1);
    assertEquals("k", same.key);
    assertEquals(3, same.order);
    // Other headers are not Ferry's to judge.
    assertEquals("k", Submission.parseFromClient(MultiMap.caseInsensitiveMultiMap().add("key", "k")
        .add("x-trace", "a").add("x-trace", "b"), 1).key);
  }

  @Test
  void aReservedHeaderIsStillRefusedFirst() {
    String message = refusal(MultiMap.caseInsensitiveMultiMap().add("key", "k").add("key", "j").add("ferry-hop", "1"));
    assertTrue(message.startsWith("the header \"ferry-hop\" is reserved"), message);
  }
}
