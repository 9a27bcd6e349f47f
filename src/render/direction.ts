/**
 * The direction of a teammate's value, as the HTML `dir="auto"` would find it: that of its first
 * letter, right to left for the scripts written that way, left to right otherwise and when it has
 * no letter (a phone number). Decided here and written as `dir="ltr"` or `dir="rtl"`, values every
 * client's engine reads, Word's included, where `auto` is newer than some of them.
 */
const FIRST_LETTER = /\p{L}/u;
const RTL_SCRIPT =
  /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}\p{Script=Samaritan}\p{Script=Mandaic}\p{Script=Adlam}\p{Script=Hanifi_Rohingya}\p{Script=Yezidi}]/u;

export function directionOf(value: string): 'ltr' | 'rtl' {
  const m = FIRST_LETTER.exec(value);
  return m !== null && RTL_SCRIPT.test(m[0]) ? 'rtl' : 'ltr';
}
