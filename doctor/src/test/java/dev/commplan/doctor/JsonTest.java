package dev.commplan.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The strict JSON reader: what RFC 8259 allows, read exactly; anything else one message with its place. */
class JsonTest {
  @Test
  void readsEveryKindOfValue() throws Exception {
    Object v = Json.parse(" {\"a\": [1, -2, 0, 3.5, -1e3, true, false, null], \"b\": {\"c\": \"x\\n\\u00e9\\ud83d\\ude00\\/\"},"
        + " \"big\": 9223372036854775807}\n");
    assertEquals(Map.of("a", Arrays.asList(1L, -2L, 0L, 3.5, -1000.0, true, false, null),
        "b", Map.of("c", "x\n\u00e9\ud83d\ude00/"), "big", Long.MAX_VALUE), v);
    assertEquals(List.of(), Json.parse("[]"));
    assertEquals(Map.of(), Json.parse("{ }"));
    assertEquals("\ud83d\ude00", Json.parse("\"\ud83d\ude00\""), "a pair of surrogates as read from UTF-8");
  }

  @Test
  void keepsTheOrderOfMembers() throws Exception {
    Map<?, ?> m = (Map<?, ?>) Json.parse("{\"z\": 1, \"a\": 2, \"m\": 3}");
    assertEquals(List.of("z", "a", "m"), List.copyOf(m.keySet()));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
      ``                       | unexpected end of input at line 1, column 1
      `{"a": 1`                | unexpected end of input at line 1, column 8
      `{"a": [1, 2`            | unexpected end of input at line 1, column 12
      `{"a": "xy`              | unexpected end of input inside a string at line 1, column 10
      `{"a": tr`               | unexpected end of input at line 1, column 9
      `[1, 2,]`                | a comma before ']' (JSON allows none after the last item) at line 1, column 7
      `{"a": 1,}`              | a comma before '}' (JSON allows none after the last member) at line 1, column 9
      `{"a": 1} x`             | more text after the end of the JSON value at line 1, column 10
      `{"a": 01}`              | a number with a leading zero at line 1, column 8
      `{"a": -}`               | a '-' not followed by a digit at line 1, column 8
      `{"a": 1.}`              | a digit missing after the decimal point at line 1, column 9
      `{"a": 1e}`              | a digit missing in the exponent at line 1, column 9
      `{"a": 99999999999999999999}` | the integer 99999999999999999999 does not fit in 64 bits at line 1, column 7
      `{"a": 1, "a": 2}`       | the member "a" appears twice in one object at line 1, column 10
      `{a: 1}`                 | expected a member name in quotes, found 'a' at line 1, column 2
      `{"a" 1}`                | expected ':', found '1' at line 1, column 6
      `[1 2]`                  | expected ']', found '2' at line 1, column 4
      `{"a": NaN}`             | unexpected 'N' at line 1, column 7
      `{"a": "\\x"}`           | an unknown escape \\x inside a string at line 1, column 8
      `{"a": "\\u12"}`         | a \\u escape needs four hex digits, found '"' at line 1, column 12
      `{"a": "\\udc00"}`       | a \\u escape of a lone low surrogate at line 1, column 14
      `{"a": "\\ud800x"}`      | a \\u escape of a high surrogate without its low half at line 1, column 14
      `// note`                | unexpected '/' at line 1, column 1
      """)
  void refusesWhatRfc8259Refuses(String text, String message) {
    Json.SyntaxException e = assertThrows(Json.SyntaxException.class, () -> Json.parse(text.replace("\\\\", "\\")));
    assertEquals(message.replace("\\\\", "\\"), e.getMessage());
  }

  @Test
  void namesTheLineOfAProblemFurtherIn() {
    Json.SyntaxException e = assertThrows(Json.SyntaxException.class, () -> Json.parse("{\n  \"a\": 1,\n  \"b\": x\n}"));
    assertEquals("unexpected 'x' at line 3, column 8", e.getMessage());
  }

  @Test
  void refusesControlCharactersAndBrokenSurrogatesInStrings() {
    assertEquals("a control character (U+000A) inside a string; JSON writes it as an escape at line 1, column 4",
        assertThrows(Json.SyntaxException.class, () -> Json.parse("[\"a\nb\"]")).getMessage());
    assertEquals("a character that is not valid UTF-16 inside a string at line 1, column 3",
        assertThrows(Json.SyntaxException.class, () -> Json.parse("[\"\udc00\"]")).getMessage());
  }

  @Test
  void deepNestingIsAnErrorNotAStackOverflow() {
    String deep = "[".repeat(100_000);
    assertEquals("values nested deeper than 64 levels at line 1, column 66",
        assertThrows(Json.SyntaxException.class, () -> Json.parse(deep)).getMessage());
  }
}
