// Written by dev.commplan.bench.PlanSources (bench/src/main/java/dev/commplan/bench/PlanSources.java):
// do not edit; change the generator and run it again.
package dev.commplan.bench.plans;

import dev.commplan.annotations.AllReduce;
import dev.commplan.annotations.CommPlan;
import dev.commplan.annotations.Shape;
import dev.commplan.runtime.F32Buffer;

/**
 * 200 float buffers of {@code n} elements each, all-reduced (sum) out of place ({@code inI} into
 * {@code outI}), all in step 0: the out-of-place many-buffers case of the benchmark, 400 buffer fields.
 * The processor generates {@code Many200OutPlan}.
 */
@CommPlan(dims = {"n"})
public final class Many200Out {

  @AllReduce(into = "out000")
  @Shape("n")
  F32Buffer in000;

  @Shape("n")
  F32Buffer out000;

  @AllReduce(into = "out001")
  @Shape("n")
  F32Buffer in001;

  @Shape("n")
  F32Buffer out001;

  @AllReduce(into = "out002")
  @Shape("n")
  F32Buffer in002;

  @Shape("n")
  F32Buffer out002;

  @AllReduce(into = "out003")
  @Shape("n")
  F32Buffer in003;

  @Shape("n")
  F32Buffer out003;

  @AllReduce(into = "out004")
  @Shape("n")
  F32Buffer in004;

  @Shape("n")
  F32Buffer out004;

  @AllReduce(into = "out005")
  @Shape("n")
  F32Buffer in005;

  @Shape("n")
  F32Buffer out005;

  @AllReduce(into = "out006")
  @Shape("n")
  F32Buffer in006;

  @Shape("n")
  F32Buffer out006;

  @AllReduce(into = "out007")
  @Shape("n")
  F32Buffer in007;

  @Shape("n")
  F32Buffer out007;

  @AllReduce(into = "out008")
  @Shape("n")
  F32Buffer in008;

  @Shape("n")
  F32Buffer out008;

  @AllReduce(into = "out009")
  @Shape("n")
  F32Buffer in009;

  @Shape("n")
  F32Buffer out009;

  @AllReduce(into = "out010")
  @Shape("n")
  F32Buffer in010;

  @Shape("n")
  F32Buffer out010;

  @AllReduce(into = "out011")
  @Shape("n")
  F32Buffer in011;

  @Shape("n")
  F32Buffer out011;

  @AllReduce(into = "out012")
  @Shape("n")
  F32Buffer in012;

  @Shape("n")
  F32Buffer out012;

  @AllReduce(into = "out013")
  @Shape("n")
  F32Buffer in013;

  @Shape("n")
  F32Buffer out013;

  @AllReduce(into = "out014")
  @Shape("n")
  F32Buffer in014;

  @Shape("n")
  F32Buffer out014;

  @AllReduce(into = "out015")
  @Shape("n")
  F32Buffer in015;

  @Shape("n")
  F32Buffer out015;

  @AllReduce(into = "out016")
  @Shape("n")
  F32Buffer in016;

  @Shape("n")
  F32Buffer out016;

  @AllReduce(into = "out017")
  @Shape("n")
  F32Buffer in017;

  @Shape("n")
  F32Buffer out017;

  @AllReduce(into = "out018")
  @Shape("n")
  F32Buffer in018;

  @Shape("n")
  F32Buffer out018;

  @AllReduce(into = "out019")
  @Shape("n")
  F32Buffer in019;

  @Shape("n")
  F32Buffer out019;

  @AllReduce(into = "out020")
  @Shape("n")
  F32Buffer in020;

  @Shape("n")
  F32Buffer out020;

  @AllReduce(into = "out021")
  @Shape("n")
  F32Buffer in021;

  @Shape("n")
  F32Buffer out021;

  @AllReduce(into = "out022")
  @Shape("n")
  F32Buffer in022;

  @Shape("n")
  F32Buffer out022;

  @AllReduce(into = "out023")
  @Shape("n")
  F32Buffer in023;

  @Shape("n")
  F32Buffer out023;

  @AllReduce(into = "out024")
  @Shape("n")
  F32Buffer in024;

  @Shape("n")
  F32Buffer out024;

  @AllReduce(into = "out025")
  @Shape("n")
  F32Buffer in025;

  @Shape("n")
  F32Buffer out025;

  @AllReduce(into = "out026")
  @Shape("n")
  F32Buffer in026;

  @Shape("n")
  F32Buffer out026;

  @AllReduce(into = "out027")
  @Shape("n")
  F32Buffer in027;

  @Shape("n")
  F32Buffer out027;

  @AllReduce(into = "out028")
  @Shape("n")
  F32Buffer in028;

  @Shape("n")
  F32Buffer out028;

  @AllReduce(into = "out029")
  @Shape("n")
  F32Buffer in029;

  @Shape("n")
  F32Buffer out029;

  @AllReduce(into = "out030")
  @Shape("n")
  F32Buffer in030;

  @Shape("n")
  F32Buffer out030;

  @AllReduce(into = "out031")
  @Shape("n")
  F32Buffer in031;

  @Shape("n")
  F32Buffer out031;

  @AllReduce(into = "out032")
  @Shape("n")
  F32Buffer in032;

  @Shape("n")
  F32Buffer out032;

  @AllReduce(into = "out033")
  @Shape("n")
  F32Buffer in033;

  @Shape("n")
  F32Buffer out033;

  @AllReduce(into = "out034")
  @Shape("n")
  F32Buffer in034;

  @Shape("n")
  F32Buffer out034;

  @AllReduce(into = "out035")
  @Shape("n")
  F32Buffer in035;

  @Shape("n")
  F32Buffer out035;

  @AllReduce(into = "out036")
  @Shape("n")
  F32Buffer in036;

  @Shape("n")
  F32Buffer out036;

  @AllReduce(into = "out037")
  @Shape("n")
  F32Buffer in037;

  @Shape("n")
  F32Buffer out037;

  @AllReduce(into = "out038")
  @Shape("n")
  F32Buffer in038;

  @Shape("n")
  F32Buffer out038;

  @AllReduce(into = "out039")
  @Shape("n")
  F32Buffer in039;

  @Shape("n")
  F32Buffer out039;

  @AllReduce(into = "out040")
  @Shape("n")
  F32Buffer in040;

  @Shape("n")
  F32Buffer out040;

  @AllReduce(into = "out041")
  @Shape("n")
  F32Buffer in041;

  @Shape("n")
  F32Buffer out041;

  @AllReduce(into = "out042")
  @Shape("n")
  F32Buffer in042;

  @Shape("n")
  F32Buffer out042;

  @AllReduce(into = "out043")
  @Shape("n")
  F32Buffer in043;

  @Shape("n")
  F32Buffer out043;

  @AllReduce(into = "out044")
  @Shape("n")
  F32Buffer in044;

  @Shape("n")
  F32Buffer out044;

  @AllReduce(into = "out045")
  @Shape("n")
  F32Buffer in045;

  @Shape("n")
  F32Buffer out045;

  @AllReduce(into = "out046")
  @Shape("n")
  F32Buffer in046;

  @Shape("n")
  F32Buffer out046;

  @AllReduce(into = "out047")
  @Shape("n")
  F32Buffer in047;

  @Shape("n")
  F32Buffer out047;

  @AllReduce(into = "out048")
  @Shape("n")
  F32Buffer in048;

  @Shape("n")
  F32Buffer out048;

  @AllReduce(into = "out049")
  @Shape("n")
  F32Buffer in049;

  @Shape("n")
  F32Buffer out049;

  @AllReduce(into = "out050")
  @Shape("n")
  F32Buffer in050;

  @Shape("n")
  F32Buffer out050;

  @AllReduce(into = "out051")
  @Shape("n")
  F32Buffer in051;

  @Shape("n")
  F32Buffer out051;

  @AllReduce(into = "out052")
  @Shape("n")
  F32Buffer in052;

  @Shape("n")
  F32Buffer out052;

  @AllReduce(into = "out053")
  @Shape("n")
  F32Buffer in053;

  @Shape("n")
  F32Buffer out053;

  @AllReduce(into = "out054")
  @Shape("n")
  F32Buffer in054;

  @Shape("n")
  F32Buffer out054;

  @AllReduce(into = "out055")
  @Shape("n")
  F32Buffer in055;

  @Shape("n")
  F32Buffer out055;

  @AllReduce(into = "out056")
  @Shape("n")
  F32Buffer in056;

  @Shape("n")
  F32Buffer out056;

  @AllReduce(into = "out057")
  @Shape("n")
  F32Buffer in057;

  @Shape("n")
  F32Buffer out057;

  @AllReduce(into = "out058")
  @Shape("n")
  F32Buffer in058;

  @Shape("n")
  F32Buffer out058;

  @AllReduce(into = "out059")
  @Shape("n")
  F32Buffer in059;

  @Shape("n")
  F32Buffer out059;

  @AllReduce(into = "out060")
  @Shape("n")
  F32Buffer in060;

  @Shape("n")
  F32Buffer out060;

  @AllReduce(into = "out061")
  @Shape("n")
  F32Buffer in061;

  @Shape("n")
  F32Buffer out061;

  @AllReduce(into = "out062")
  @Shape("n")
  F32Buffer in062;

  @Shape("n")
  F32Buffer out062;

  @AllReduce(into = "out063")
  @Shape("n")
  F32Buffer in063;

  @Shape("n")
  F32Buffer out063;

  @AllReduce(into = "out064")
  @Shape("n")
  F32Buffer in064;

  @Shape("n")
  F32Buffer out064;

  @AllReduce(into = "out065")
  @Shape("n")
  F32Buffer in065;

  @Shape("n")
  F32Buffer out065;

  @AllReduce(into = "out066")
  @Shape("n")
  F32Buffer in066;

  @Shape("n")
  F32Buffer out066;

  @AllReduce(into = "out067")
  @Shape("n")
  F32Buffer in067;

  @Shape("n")
  F32Buffer out067;

  @AllReduce(into = "out068")
  @Shape("n")
  F32Buffer in068;

  @Shape("n")
  F32Buffer out068;

  @AllReduce(into = "out069")
  @Shape("n")
  F32Buffer in069;

  @Shape("n")
  F32Buffer out069;

  @AllReduce(into = "out070")
  @Shape("n")
  F32Buffer in070;

  @Shape("n")
  F32Buffer out070;

  @AllReduce(into = "out071")
  @Shape("n")
  F32Buffer in071;

  @Shape("n")
  F32Buffer out071;

  @AllReduce(into = "out072")
  @Shape("n")
  F32Buffer in072;

  @Shape("n")
  F32Buffer out072;

  @AllReduce(into = "out073")
  @Shape("n")
  F32Buffer in073;

  @Shape("n")
  F32Buffer out073;

  @AllReduce(into = "out074")
  @Shape("n")
  F32Buffer in074;

  @Shape("n")
  F32Buffer out074;

  @AllReduce(into = "out075")
  @Shape("n")
  F32Buffer in075;

  @Shape("n")
  F32Buffer out075;

  @AllReduce(into = "out076")
  @Shape("n")
  F32Buffer in076;

  @Shape("n")
  F32Buffer out076;

  @AllReduce(into = "out077")
  @Shape("n")
  F32Buffer in077;

  @Shape("n")
  F32Buffer out077;

  @AllReduce(into = "out078")
  @Shape("n")
  F32Buffer in078;

  @Shape("n")
  F32Buffer out078;

  @AllReduce(into = "out079")
  @Shape("n")
  F32Buffer in079;

  @Shape("n")
  F32Buffer out079;

  @AllReduce(into = "out080")
  @Shape("n")
  F32Buffer in080;

  @Shape("n")
  F32Buffer out080;

  @AllReduce(into = "out081")
  @Shape("n")
  F32Buffer in081;

  @Shape("n")
  F32Buffer out081;

  @AllReduce(into = "out082")
  @Shape("n")
  F32Buffer in082;

  @Shape("n")
  F32Buffer out082;

  @AllReduce(into = "out083")
  @Shape("n")
  F32Buffer in083;

  @Shape("n")
  F32Buffer out083;

  @AllReduce(into = "out084")
  @Shape("n")
  F32Buffer in084;

  @Shape("n")
  F32Buffer out084;

  @AllReduce(into = "out085")
  @Shape("n")
  F32Buffer in085;

  @Shape("n")
  F32Buffer out085;

  @AllReduce(into = "out086")
  @Shape("n")
  F32Buffer in086;

  @Shape("n")
  F32Buffer out086;

  @AllReduce(into = "out087")
  @Shape("n")
  F32Buffer in087;

  @Shape("n")
  F32Buffer out087;

  @AllReduce(into = "out088")
  @Shape("n")
  F32Buffer in088;

  @Shape("n")
  F32Buffer out088;

  @AllReduce(into = "out089")
  @Shape("n")
  F32Buffer in089;

  @Shape("n")
  F32Buffer out089;

  @AllReduce(into = "out090")
  @Shape("n")
  F32Buffer in090;

  @Shape("n")
  F32Buffer out090;

  @AllReduce(into = "out091")
  @Shape("n")
  F32Buffer in091;

  @Shape("n")
  F32Buffer out091;

  @AllReduce(into = "out092")
  @Shape("n")
  F32Buffer in092;

  @Shape("n")
  F32Buffer out092;

  @AllReduce(into = "out093")
  @Shape("n")
  F32Buffer in093;

  @Shape("n")
  F32Buffer out093;

  @AllReduce(into = "out094")
  @Shape("n")
  F32Buffer in094;

  @Shape("n")
  F32Buffer out094;

  @AllReduce(into = "out095")
  @Shape("n")
  F32Buffer in095;

  @Shape("n")
  F32Buffer out095;

  @AllReduce(into = "out096")
  @Shape("n")
  F32Buffer in096;

  @Shape("n")
  F32Buffer out096;

  @AllReduce(into = "out097")
  @Shape("n")
  F32Buffer in097;

  @Shape("n")
  F32Buffer out097;

  @AllReduce(into = "out098")
  @Shape("n")
  F32Buffer in098;

  @Shape("n")
  F32Buffer out098;

  @AllReduce(into = "out099")
  @Shape("n")
  F32Buffer in099;

  @Shape("n")
  F32Buffer out099;

  @AllReduce(into = "out100")
  @Shape("n")
  F32Buffer in100;

  @Shape("n")
  F32Buffer out100;

  @AllReduce(into = "out101")
  @Shape("n")
  F32Buffer in101;

  @Shape("n")
  F32Buffer out101;

  @AllReduce(into = "out102")
  @Shape("n")
  F32Buffer in102;

  @Shape("n")
  F32Buffer out102;

  @AllReduce(into = "out103")
  @Shape("n")
  F32Buffer in103;

  @Shape("n")
  F32Buffer out103;

  @AllReduce(into = "out104")
  @Shape("n")
  F32Buffer in104;

  @Shape("n")
  F32Buffer out104;

  @AllReduce(into = "out105")
  @Shape("n")
  F32Buffer in105;

  @Shape("n")
  F32Buffer out105;

  @AllReduce(into = "out106")
  @Shape("n")
  F32Buffer in106;

  @Shape("n")
  F32Buffer out106;

  @AllReduce(into = "out107")
  @Shape("n")
  F32Buffer in107;

  @Shape("n")
  F32Buffer out107;

  @AllReduce(into = "out108")
  @Shape("n")
  F32Buffer in108;

  @Shape("n")
  F32Buffer out108;

  @AllReduce(into = "out109")
  @Shape("n")
  F32Buffer in109;

  @Shape("n")
  F32Buffer out109;

  @AllReduce(into = "out110")
  @Shape("n")
  F32Buffer in110;

  @Shape("n")
  F32Buffer out110;

  @AllReduce(into = "out111")
  @Shape("n")
  F32Buffer in111;

  @Shape("n")
  F32Buffer out111;

  @AllReduce(into = "out112")
  @Shape("n")
  F32Buffer in112;

  @Shape("n")
  F32Buffer out112;

  @AllReduce(into = "out113")
  @Shape("n")
  F32Buffer in113;

  @Shape("n")
  F32Buffer out113;

  @AllReduce(into = "out114")
  @Shape("n")
  F32Buffer in114;

  @Shape("n")
  F32Buffer out114;

  @AllReduce(into = "out115")
  @Shape("n")
  F32Buffer in115;

  @Shape("n")
  F32Buffer out115;

  @AllReduce(into = "out116")
  @Shape("n")
  F32Buffer in116;

  @Shape("n")
  F32Buffer out116;

  @AllReduce(into = "out117")
  @Shape("n")
  F32Buffer in117;

  @Shape("n")
  F32Buffer out117;

  @AllReduce(into = "out118")
  @Shape("n")
  F32Buffer in118;

  @Shape("n")
  F32Buffer out118;

  @AllReduce(into = "out119")
  @Shape("n")
  F32Buffer in119;

  @Shape("n")
  F32Buffer out119;

  @AllReduce(into = "out120")
  @Shape("n")
  F32Buffer in120;

  @Shape("n")
  F32Buffer out120;

  @AllReduce(into = "out121")
  @Shape("n")
  F32Buffer in121;

  @Shape("n")
  F32Buffer out121;

  @AllReduce(into = "out122")
  @Shape("n")
  F32Buffer in122;

  @Shape("n")
  F32Buffer out122;

  @AllReduce(into = "out123")
  @Shape("n")
  F32Buffer in123;

  @Shape("n")
  F32Buffer out123;

  @AllReduce(into = "out124")
  @Shape("n")
  F32Buffer in124;

  @Shape("n")
  F32Buffer out124;

  @AllReduce(into = "out125")
  @Shape("n")
  F32Buffer in125;

  @Shape("n")
  F32Buffer out125;

  @AllReduce(into = "out126")
  @Shape("n")
  F32Buffer in126;

  @Shape("n")
  F32Buffer out126;

  @AllReduce(into = "out127")
  @Shape("n")
  F32Buffer in127;

  @Shape("n")
  F32Buffer out127;

  @AllReduce(into = "out128")
  @Shape("n")
  F32Buffer in128;

  @Shape("n")
  F32Buffer out128;

  @AllReduce(into = "out129")
  @Shape("n")
  F32Buffer in129;

  @Shape("n")
  F32Buffer out129;

  @AllReduce(into = "out130")
  @Shape("n")
  F32Buffer in130;

  @Shape("n")
  F32Buffer out130;

  @AllReduce(into = "out131")
  @Shape("n")
  F32Buffer in131;

  @Shape("n")
  F32Buffer out131;

  @AllReduce(into = "out132")
  @Shape("n")
  F32Buffer in132;

  @Shape("n")
  F32Buffer out132;

  @AllReduce(into = "out133")
  @Shape("n")
  F32Buffer in133;

  @Shape("n")
  F32Buffer out133;

  @AllReduce(into = "out134")
  @Shape("n")
  F32Buffer in134;

  @Shape("n")
  F32Buffer out134;

  @AllReduce(into = "out135")
  @Shape("n")
  F32Buffer in135;

  @Shape("n")
  F32Buffer out135;

  @AllReduce(into = "out136")
  @Shape("n")
  F32Buffer in136;

  @Shape("n")
  F32Buffer out136;

  @AllReduce(into = "out137")
  @Shape("n")
  F32Buffer in137;

  @Shape("n")
  F32Buffer out137;

  @AllReduce(into = "out138")
  @Shape("n")
  F32Buffer in138;

  @Shape("n")
  F32Buffer out138;

  @AllReduce(into = "out139")
  @Shape("n")
  F32Buffer in139;

  @Shape("n")
  F32Buffer out139;

  @AllReduce(into = "out140")
  @Shape("n")
  F32Buffer in140;

  @Shape("n")
  F32Buffer out140;

  @AllReduce(into = "out141")
  @Shape("n")
  F32Buffer in141;

  @Shape("n")
  F32Buffer out141;

  @AllReduce(into = "out142")
  @Shape("n")
  F32Buffer in142;

  @Shape("n")
  F32Buffer out142;

  @AllReduce(into = "out143")
  @Shape("n")
  F32Buffer in143;

  @Shape("n")
  F32Buffer out143;

  @AllReduce(into = "out144")
  @Shape("n")
  F32Buffer in144;

  @Shape("n")
  F32Buffer out144;

  @AllReduce(into = "out145")
  @Shape("n")
  F32Buffer in145;

  @Shape("n")
  F32Buffer out145;

  @AllReduce(into = "out146")
  @Shape("n")
  F32Buffer in146;

  @Shape("n")
  F32Buffer out146;

  @AllReduce(into = "out147")
  @Shape("n")
  F32Buffer in147;

  @Shape("n")
  F32Buffer out147;

  @AllReduce(into = "out148")
  @Shape("n")
  F32Buffer in148;

  @Shape("n")
  F32Buffer out148;

  @AllReduce(into = "out149")
  @Shape("n")
  F32Buffer in149;

  @Shape("n")
  F32Buffer out149;

  @AllReduce(into = "out150")
  @Shape("n")
  F32Buffer in150;

  @Shape("n")
  F32Buffer out150;

  @AllReduce(into = "out151")
  @Shape("n")
  F32Buffer in151;

  @Shape("n")
  F32Buffer out151;

  @AllReduce(into = "out152")
  @Shape("n")
  F32Buffer in152;

  @Shape("n")
  F32Buffer out152;

  @AllReduce(into = "out153")
  @Shape("n")
  F32Buffer in153;

  @Shape("n")
  F32Buffer out153;

  @AllReduce(into = "out154")
  @Shape("n")
  F32Buffer in154;

  @Shape("n")
  F32Buffer out154;

  @AllReduce(into = "out155")
  @Shape("n")
  F32Buffer in155;

  @Shape("n")
  F32Buffer out155;

  @AllReduce(into = "out156")
  @Shape("n")
  F32Buffer in156;

  @Shape("n")
  F32Buffer out156;

  @AllReduce(into = "out157")
  @Shape("n")
  F32Buffer in157;

  @Shape("n")
  F32Buffer out157;

  @AllReduce(into = "out158")
  @Shape("n")
  F32Buffer in158;

  @Shape("n")
  F32Buffer out158;

  @AllReduce(into = "out159")
  @Shape("n")
  F32Buffer in159;

  @Shape("n")
  F32Buffer out159;

  @AllReduce(into = "out160")
  @Shape("n")
  F32Buffer in160;

  @Shape("n")
  F32Buffer out160;

  @AllReduce(into = "out161")
  @Shape("n")
  F32Buffer in161;

  @Shape("n")
  F32Buffer out161;

  @AllReduce(into = "out162")
  @Shape("n")
  F32Buffer in162;

  @Shape("n")
  F32Buffer out162;

  @AllReduce(into = "out163")
  @Shape("n")
  F32Buffer in163;

  @Shape("n")
  F32Buffer out163;

  @AllReduce(into = "out164")
  @Shape("n")
  F32Buffer in164;

  @Shape("n")
  F32Buffer out164;

  @AllReduce(into = "out165")
  @Shape("n")
  F32Buffer in165;

  @Shape("n")
  F32Buffer out165;

  @AllReduce(into = "out166")
  @Shape("n")
  F32Buffer in166;

  @Shape("n")
  F32Buffer out166;

  @AllReduce(into = "out167")
  @Shape("n")
  F32Buffer in167;

  @Shape("n")
  F32Buffer out167;

  @AllReduce(into = "out168")
  @Shape("n")
  F32Buffer in168;

  @Shape("n")
  F32Buffer out168;

  @AllReduce(into = "out169")
  @Shape("n")
  F32Buffer in169;

  @Shape("n")
  F32Buffer out169;

  @AllReduce(into = "out170")
  @Shape("n")
  F32Buffer in170;

  @Shape("n")
  F32Buffer out170;

  @AllReduce(into = "out171")
  @Shape("n")
  F32Buffer in171;

  @Shape("n")
  F32Buffer out171;

  @AllReduce(into = "out172")
  @Shape("n")
  F32Buffer in172;

  @Shape("n")
  F32Buffer out172;

  @AllReduce(into = "out173")
  @Shape("n")
  F32Buffer in173;

  @Shape("n")
  F32Buffer out173;

  @AllReduce(into = "out174")
  @Shape("n")
  F32Buffer in174;

  @Shape("n")
  F32Buffer out174;

  @AllReduce(into = "out175")
  @Shape("n")
  F32Buffer in175;

  @Shape("n")
  F32Buffer out175;

  @AllReduce(into = "out176")
  @Shape("n")
  F32Buffer in176;

  @Shape("n")
  F32Buffer out176;

  @AllReduce(into = "out177")
  @Shape("n")
  F32Buffer in177;

  @Shape("n")
  F32Buffer out177;

  @AllReduce(into = "out178")
  @Shape("n")
  F32Buffer in178;

  @Shape("n")
  F32Buffer out178;

  @AllReduce(into = "out179")
  @Shape("n")
  F32Buffer in179;

  @Shape("n")
  F32Buffer out179;

  @AllReduce(into = "out180")
  @Shape("n")
  F32Buffer in180;

  @Shape("n")
  F32Buffer out180;

  @AllReduce(into = "out181")
  @Shape("n")
  F32Buffer in181;

  @Shape("n")
  F32Buffer out181;

  @AllReduce(into = "out182")
  @Shape("n")
  F32Buffer in182;

  @Shape("n")
  F32Buffer out182;

  @AllReduce(into = "out183")
  @Shape("n")
  F32Buffer in183;

  @Shape("n")
  F32Buffer out183;

  @AllReduce(into = "out184")
  @Shape("n")
  F32Buffer in184;

  @Shape("n")
  F32Buffer out184;

  @AllReduce(into = "out185")
  @Shape("n")
  F32Buffer in185;

  @Shape("n")
  F32Buffer out185;

  @AllReduce(into = "out186")
  @Shape("n")
  F32Buffer in186;

  @Shape("n")
  F32Buffer out186;

  @AllReduce(into = "out187")
  @Shape("n")
  F32Buffer in187;

  @Shape("n")
  F32Buffer out187;

  @AllReduce(into = "out188")
  @Shape("n")
  F32Buffer in188;

  @Shape("n")
  F32Buffer out188;

  @AllReduce(into = "out189")
  @Shape("n")
  F32Buffer in189;

  @Shape("n")
  F32Buffer out189;

  @AllReduce(into = "out190")
  @Shape("n")
  F32Buffer in190;

  @Shape("n")
  F32Buffer out190;

  @AllReduce(into = "out191")
  @Shape("n")
  F32Buffer in191;

  @Shape("n")
  F32Buffer out191;

  @AllReduce(into = "out192")
  @Shape("n")
  F32Buffer in192;

  @Shape("n")
  F32Buffer out192;

  @AllReduce(into = "out193")
  @Shape("n")
  F32Buffer in193;

  @Shape("n")
  F32Buffer out193;

  @AllReduce(into = "out194")
  @Shape("n")
  F32Buffer in194;

  @Shape("n")
  F32Buffer out194;

  @AllReduce(into = "out195")
  @Shape("n")
  F32Buffer in195;

  @Shape("n")
  F32Buffer out195;

  @AllReduce(into = "out196")
  @Shape("n")
  F32Buffer in196;

  @Shape("n")
  F32Buffer out196;

  @AllReduce(into = "out197")
  @Shape("n")
  F32Buffer in197;

  @Shape("n")
  F32Buffer out197;

  @AllReduce(into = "out198")
  @Shape("n")
  F32Buffer in198;

  @Shape("n")
  F32Buffer out198;

  @AllReduce(into = "out199")
  @Shape("n")
  F32Buffer in199;

  @Shape("n")
  F32Buffer out199;
}
