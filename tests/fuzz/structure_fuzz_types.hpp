#pragma once
// The NodeSet2 model whose structures structure_fuzz.cpp decodes: built into the fuzz target, so that it
// reads no file at fuzz time. Its DataTypes mirror the companion specifications' (DI's
// TransferResultDataDataType and ParameterResultDataType, Machinery Result's ResultMetaDataType,
// ProcessingTimesDataType and ResultDataType), plus a union, a matrix field and a structure that nests
// itself, so that every kind of field of structure_codec.hpp is reached. kFuzzStructures lists the
// structures in the order the input's selector byte picks them (seeds_structure.cpp writes seeds in it).
#include <cstdint>

namespace opcuad::fuzz {

inline constexpr const char* kStructureFuzzNamespace = "urn:opcuad:fuzz:structures";

// ns=1;i=<id> of the model, in selector order.
inline constexpr uint32_t kFuzzStructures[] = {3001, 3002, 3003, 3004, 3005, 3006, 3007, 3008};

inline constexpr const char* kStructureFuzzTypes = R"xml(<?xml version="1.0" encoding="utf-8"?>
<UANodeSet xmlns="http://opcfoundation.org/UA/2011/03/UANodeSet.xsd">
  <NamespaceUris><Uri>urn:opcuad:fuzz:structures</Uri></NamespaceUris>
  <Models><Model ModelUri="urn:opcuad:fuzz:structures" Version="1.0" /></Models>
  <Aliases>
    <Alias Alias="Boolean">i=1</Alias>
    <Alias Alias="Int32">i=6</Alias>
    <Alias Alias="Int64">i=8</Alias>
    <Alias Alias="Double">i=11</Alias>
    <Alias Alias="String">i=12</Alias>
    <Alias Alias="UtcTime">i=294</Alias>
    <Alias Alias="Duration">i=290</Alias>
    <Alias Alias="StatusCode">i=19</Alias>
    <Alias Alias="QualifiedName">i=20</Alias>
    <Alias Alias="LocalizedText">i=21</Alias>
    <Alias Alias="DiagnosticInfo">i=25</Alias>
    <Alias Alias="NodeId">i=17</Alias>
    <Alias Alias="ByteString">i=15</Alias>
    <Alias Alias="HasSubtype">i=45</Alias>
  </Aliases>
  <!-- DI ParameterResultDataType -->
  <UADataType NodeId="ns=1;i=3001" BrowseName="1:ParameterResultDataType">
    <DisplayName>ParameterResultDataType</DisplayName>
    <References><Reference ReferenceType="HasSubtype" IsForward="false">i=22</Reference></References>
    <Definition Name="1:ParameterResultDataType">
      <Field Name="NodePath" DataType="QualifiedName" ValueRank="1" />
      <Field Name="StatusCode" DataType="StatusCode" />
      <Field Name="Diagnostics" DataType="DiagnosticInfo" />
    </Definition>
  </UADataType>
  <!-- DI TransferResultDataDataType -->
  <UADataType NodeId="ns=1;i=3002" BrowseName="1:TransferResultDataDataType">
    <DisplayName>TransferResultDataDataType</DisplayName>
    <References><Reference ReferenceType="HasSubtype" IsForward="false">i=22</Reference></References>
    <Definition Name="1:TransferResultDataDataType">
      <Field Name="SequenceNumber" DataType="Int32" />
      <Field Name="EndOfResults" DataType="Boolean" />
      <Field Name="ParameterDefs" DataType="ns=1;i=3001" ValueRank="1" />
    </Definition>
  </UADataType>
  <!-- Machinery Result ProcessingTimesDataType -->
  <UADataType NodeId="ns=1;i=3003" BrowseName="1:ProcessingTimesDataType">
    <DisplayName>ProcessingTimesDataType</DisplayName>
    <References><Reference ReferenceType="HasSubtype" IsForward="false">i=22</Reference></References>
    <Definition Name="1:ProcessingTimesDataType">
      <Field Name="StartTime" DataType="UtcTime" />
      <Field Name="EndTime" DataType="UtcTime" />
      <Field Name="AcquisitionDuration" DataType="Duration" IsOptional="true" />
      <Field Name="ProcessingDuration" DataType="Duration" IsOptional="true" />
    </Definition>
  </UADataType>
  <!-- Machinery Result ResultEvaluationEnum -->
  <UADataType NodeId="ns=1;i=3100" BrowseName="1:ResultEvaluationEnum">
    <DisplayName>ResultEvaluationEnum</DisplayName>
    <References><Reference ReferenceType="HasSubtype" IsForward="false">i=29</Reference></References>
    <Definition Name="1:ResultEvaluationEnum">
      <Field Name="Undefined" Value="0" />
      <Field Name="OK" Value="1" />
      <Field Name="NotOK" Value="2" />
    </Definition>
  </UADataType>
  <!-- Machinery Result ResultMetaDataType (shortened) -->
  <UADataType NodeId="ns=1;i=3004" BrowseName="1:ResultMetaDataType">
    <DisplayName>ResultMetaDataType</DisplayName>
    <References><Reference ReferenceType="HasSubtype" IsForward="false">i=22</Reference></References>
    <Definition Name="1:ResultMetaDataType">
      <Field Name="ResultId" DataType="String" />
      <Field Name="HasTransferableDataOnFile" DataType="Boolean" IsOptional="true" />
      <Field Name="ResultState" DataType="Int32" IsOptional="true" />
      <Field Name="CreationTime" DataType="UtcTime" IsOptional="true" />
      <Field Name="ProcessingTimes" DataType="ns=1;i=3003" IsOptional="true" />
      <Field Name="ResultUri" DataType="String" ValueRank="1" IsOptional="true" />
      <Field Name="ResultEvaluation" DataType="ns=1;i=3100" IsOptional="true" />
      <Field Name="ResultEvaluationCode" DataType="Int64" IsOptional="true" />
      <Field Name="ResultEvaluationDetails" DataType="LocalizedText" IsOptional="true" />
    </Definition>
  </UADataType>
  <!-- Machinery Result ResultDataType: a field that allows subtypes, an array of BaseDataType -->
  <UADataType NodeId="ns=1;i=3005" BrowseName="1:ResultDataType">
    <DisplayName>ResultDataType</DisplayName>
    <References><Reference ReferenceType="HasSubtype" IsForward="false">i=22</Reference></References>
    <Definition Name="1:ResultDataType">
      <Field Name="ResultMetaData" DataType="ns=1;i=3004" AllowSubTypes="true" />
      <Field Name="ResultContent" ValueRank="1" />
    </Definition>
  </UADataType>
  <UADataType NodeId="ns=1;i=3006" BrowseName="1:IdChoice">
    <DisplayName>IdChoice</DisplayName>
    <References><Reference ReferenceType="HasSubtype" IsForward="false">i=12756</Reference></References>
    <Definition Name="1:IdChoice" IsUnion="true">
      <Field Name="Number" DataType="Int32" />
      <Field Name="Text" DataType="String" />
      <Field Name="Node" DataType="NodeId" />
      <Field Name="Times" DataType="ns=1;i=3003" />
    </Definition>
  </UADataType>
  <UADataType NodeId="ns=1;i=3007" BrowseName="1:Image">
    <DisplayName>Image</DisplayName>
    <References><Reference ReferenceType="HasSubtype" IsForward="false">i=22</Reference></References>
    <Definition Name="1:Image">
      <Field Name="Pixels" DataType="Double" ValueRank="2" />
      <Field Name="Raw" DataType="ByteString" />
      <Field Name="Choices" DataType="ns=1;i=3006" ValueRank="1" />
    </Definition>
  </UADataType>
  <UADataType NodeId="ns=1;i=3008" BrowseName="1:Tree">
    <DisplayName>Tree</DisplayName>
    <References><Reference ReferenceType="HasSubtype" IsForward="false">i=22</Reference></References>
    <Definition Name="1:Tree">
      <Field Name="Label" DataType="String" />
      <Field Name="Children" DataType="ns=1;i=3008" ValueRank="1" />
    </Definition>
  </UADataType>
</UANodeSet>
)xml";

}  // namespace opcuad::fuzz
