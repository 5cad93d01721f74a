#include "server/web/html.h"

#include "gtest/gtest.h"
#include "server/web/web_auth.h"

namespace berth::web {
namespace {

TEST(HtmlEscape, EscapesMarkupQuotesAndControlBytes) {
  EXPECT_EQ(HtmlEscape("<script>document.title='x'</script>"),
            "&lt;script&gt;document.title=&#39;x&#39;&lt;/script&gt;");
  EXPECT_EQ(HtmlEscape("a\"b&c"), "a&quot;b&amp;c");
  EXPECT_EQ(HtmlEscape("ok\tline\n"), "ok\tline\n");
  EXPECT_EQ(HtmlEscape("\x1b[31mred"), "\xEF\xBF\xBD[31mred");
  EXPECT_EQ(HtmlEscape(absl::string_view("a\0b", 3)), "a\xEF\xBF\xBD" "b");
}

TEST(QueryEscape, RoundTripsHostileValues) {
  const std::string hostile = "a b&c=d\"><script>%zz+";
  EXPECT_EQ(QueryEscape("ws-1_a.b~"), "ws-1_a.b~");
  EXPECT_EQ(QueryEscape("a b&\""), "a%20b%26%22");
  EXPECT_EQ(QueryUnescape(QueryEscape(hostile)), hostile);
  EXPECT_EQ(QueryUnescape("100%"), "100%");
  EXPECT_EQ(QueryUnescape("a+b%2"), "a b%2");
}

TEST(RenderPage, EscapesTitleAndHasNoScript) {
  PageOptions po;
  po.title = "Job <img src=x onerror=alert(1)>";
  po.refresh_seconds = 10;
  const std::string html = RenderPage(po, "<p>body</p>");
  EXPECT_NE(html.find("Job &lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("http-equiv=\"refresh\" content=\"10\""), std::string::npos);
  EXPECT_NE(html.find("<p>body</p>"), std::string::npos);
}

TEST(RenderBar, ClampsAndEscapes) {
  const std::string bar = RenderBar("pool <b>", 200, 300, 100, "2 of 1");
  EXPECT_NE(bar.find("width:100.0%"), std::string::npos);
  EXPECT_NE(bar.find("pool &lt;b&gt;"), std::string::npos);
  EXPECT_NE(RenderBar("x", 1, 1, 0, "unlimited").find("width:0.0%"), std::string::npos);
}

TEST(WebAuth, LoginBodyEscapesTheError) {
  const std::string body = LoginBody("<b>bad</b>");
  EXPECT_NE(body.find("&lt;b&gt;bad"), std::string::npos);
  EXPECT_NE(body.find("action=\"/ui/login\""), std::string::npos);
  EXPECT_NE(body.find("type=\"password\""), std::string::npos);
}

}  // namespace
}  // namespace berth::web
